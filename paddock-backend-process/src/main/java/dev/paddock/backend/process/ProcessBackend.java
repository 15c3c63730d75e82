package dev.paddock.backend.process;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.RuntimeStats;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.kit.StartDiagnosis;
import dev.paddock.backend.kit.protocol.AliveProbe;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Sandboxes as local agent-server child processes, one per directory {@code <data
 * dir>/sandboxes/<id>/}. Everything needed to find an agent again (pid, start time, port, freezer)
 * is in the handle and in the directory's {@code paddock.json}, so a new instance (a restarted
 * control plane) lists, inspects, pauses and destroys what an earlier one started.
 *
 * <p>Thread-safe: the only mutable state is the map of agents this instance spawned (kept for their
 * exit codes); calls for one sandbox are serialised by the caller.
 */
final class ProcessBackend implements SandboxBackend {
  static final String NAME = "process";
  private static final System.Logger LOG = System.getLogger("paddock.backend.process");

  private final ProcessSettings settings;
  private final ProcFs procFs;
  private final Freezers freezers;
  private final AliveProbe alive;
  private final AgentStarter starter;
  private final Teardown teardown;
  private final ConcurrentMap<String, StartedAgent> spawned = new ConcurrentHashMap<>();

  private ProcessBackend(
      ProcessSettings settings,
      ProcFs procFs,
      Freezers freezers,
      CgroupLimits limits,
      ProcessLauncher launcher) {
    this.settings = settings;
    this.procFs = procFs;
    this.freezers = freezers;
    this.alive = new AliveProbe(settings.aliveTimeout());
    this.teardown = new Teardown(new Signals(launcher), procFs);
    this.starter = new AgentStarter(settings, launcher, procFs, freezers, limits, teardown);
  }

  /**
   * A backend for {@code settings}, detecting how sandboxes can be frozen on this host.
   *
   * @throws IllegalArgumentException when {@code process.freezer} forces a freezer this host lacks
   */
  static ProcessBackend create(ProcessSettings settings, ProcessLauncher launcher) {
    ProcFs procFs = ProcFs.system();
    Freezers freezers = Freezers.detect(settings.freezer(), procFs, new Signals(launcher));
    LOG.log(System.Logger.Level.DEBUG, "process backend: freezer {0}", freezers.kind());
    CgroupLimits limits = CgroupLimits.detect(!settings.freezer().equals(SignalFreezer.KIND));
    return new ProcessBackend(settings, procFs, freezers, limits, launcher);
  }

  /** The freezer kind new sandboxes get. */
  String freezerKind() {
    return freezers.kind();
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public RuntimeHandle start(RuntimeRequest request) {
    StartedAgent agent = starter.start(request);
    spawned.put(request.sandboxId(), agent);
    return agent.marker().toHandle(NAME);
  }

  /** MISSING, not an exception, for a handle that names no agent of this backend (SPI rule). */
  @Override
  public RuntimeState inspect(RuntimeHandle handle) {
    Marker marker;
    try {
      marker = withKnownPort(Marker.fromHandle(handle));
    } catch (IllegalArgumentException e) {
      LOG.log(System.Logger.Level.DEBUG, "process backend: unreadable handle: {0}", e.getMessage());
      return RuntimeState.missing();
    }
    if (!procFs.isAlive(marker.pid(), marker.startTime())) {
      return exited(marker).orElseGet(RuntimeState::missing);
    }
    if (freezer(marker).frozen()) {
      return state(SandboxStatus.PAUSED, List.of());
    }
    if (marker.port() == 0 && !spawned.containsKey(marker.sandboxId())) {
      // Its start was cut short with an earlier control plane before the agent said where it
      // listens: after the ready deadline it will never be usable.
      boolean late =
          marker.createdAt().plus(settings.readyTimeout()).isBefore(java.time.Instant.now());
      return late
          ? new RuntimeState(
              SandboxStatus.ERROR,
              List.of(),
              Optional.of(
                  new RuntimeFailure(
                      Kind.NEVER_READY, "agent pid " + marker.pid() + " never reported its port")))
          : state(SandboxStatus.STARTING, List.of());
    }
    if (!alive.answers(marker.port())) {
      return state(SandboxStatus.STARTING, List.of());
    }
    String url = "http://127.0.0.1:" + marker.port();
    return state(
        SandboxStatus.RUNNING,
        List.of(new ExposedUrl(ExposedUrl.AGENT_SERVER, url, marker.port())));
  }

  /** From its limit cgroups (and its freezer cgroup on v2), else /proc; empty once it exited. */
  @Override
  public Optional<RuntimeStats> stats(RuntimeHandle handle) {
    Marker marker = Marker.fromHandle(handle);
    if (!procFs.isAlive(marker.pid(), marker.startTime())) {
      return Optional.empty();
    }
    List<Path> cgroups = new ArrayList<>(marker.limitCgroups());
    marker.cgroup().ifPresent(cgroups::add);
    Path workspace = SandboxLayout.of(settings.sandboxesDir(), marker.sandboxId()).workspace();
    return Optional.of(
        new ProcessStats(procFs, procFs.root()).read(marker.pid(), cgroups, workspace));
  }

  /** From the sandbox directory's {@code agent.log} (capped by {@code process.log-max-bytes}). */
  @Override
  public Optional<byte[]> agentLog(RuntimeHandle handle, long offset, int maxBytes) {
    Marker marker;
    try {
      marker = Marker.fromHandle(handle);
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
    return AgentOutput.read(
        SandboxLayout.of(settings.sandboxesDir(), marker.sandboxId()).log(), offset, maxBytes);
  }

  /**
   * The marker with the agent's port: a start cut short by a control-plane crash leaves port 0 in
   * the marker, but the agent itself wrote its port to the ready file once it served.
   */
  private Marker withKnownPort(Marker marker) {
    if (marker.port() != 0) {
      return marker;
    }
    Path ready = SandboxLayout.of(settings.sandboxesDir(), marker.sandboxId()).readyFile();
    try {
      return marker.withPort(Integer.parseInt(Files.readString(ready).trim()));
    } catch (IOException | NumberFormatException e) {
      return marker;
    }
  }

  private static RuntimeState state(SandboxStatus status, List<ExposedUrl> urls) {
    return new RuntimeState(status, urls, Optional.empty());
  }

  /**
   * ERROR STOPPED with the exit code and signal (safe facts, so in the safe message too), when this
   * instance spawned the agent and saw it exit. Only a started agent has a handle, so it had been
   * running: "exited while starting" would be untrue.
   */
  private Optional<RuntimeState> exited(Marker marker) {
    return Optional.ofNullable(spawned.get(marker.sandboxId()))
        .filter(agent -> agent.marker().pid() == marker.pid() && !agent.process().isAlive())
        .map(
            agent -> new RuntimeState(SandboxStatus.ERROR, List.of(), Optional.of(stopped(agent))));
  }

  private static RuntimeFailure stopped(StartedAgent agent) {
    String exit = StartDiagnosis.exitText(agent.process().exitValue());
    return new RuntimeFailure(
        Kind.STOPPED,
        "The sandbox's agent stopped while it was running: it " + exit + ".",
        "agent " + exit + StartDiagnosis.tailDetail(agent.output().tail()));
  }

  /**
   * Freezes the agent and every process it started.
   *
   * @throws SandboxException when the sandbox's agent is gone
   */
  @Override
  public void pause(RuntimeHandle handle) {
    Marker marker = live(handle, "paused");
    freezer(marker).freeze();
  }

  /**
   * Thaws the sandbox and returns once its agent answers; the handle does not change.
   *
   * @throws dev.paddock.api.spi.RuntimeStartException EXITED when the agent is gone, NEVER_READY
   *     when it does not answer within the ready timeout
   */
  @Override
  public RuntimeHandle resume(RuntimeHandle handle) {
    Marker marker = Marker.fromHandle(handle);
    if (!procFs.isAlive(marker.pid(), marker.startTime())) {
      throw RuntimeStartException.of(
          Kind.EXITED, "agent " + marker.pid() + " of " + marker.sandboxId() + " is gone");
    }
    freezer(marker).thaw();
    if (!Poll.until(() -> alive.answers(marker.port()), settings.readyTimeout())) {
      throw StartDiagnosis.neverReady(settings.readyTimeout(), List.of());
    }
    return handle;
  }

  @Override
  public void destroy(RuntimeHandle handle) {
    Marker marker = Marker.fromHandle(handle);
    SandboxLayout layout = SandboxLayout.of(settings.sandboxesDir(), marker.sandboxId());
    teardown.run(marker, freezer(marker), layout, settings.stopGrace());
    Optional.ofNullable(spawned.remove(marker.sandboxId()))
        .ifPresent(agent -> agent.output().awaitEnd(Duration.ofSeconds(2)));
  }

  /** Every sandbox directory whose marker names a live agent (same pid and start time). */
  @Override
  public List<RuntimeHandle> list() {
    Path dir = settings.sandboxesDir();
    List<RuntimeHandle> handles = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return handles;
    }
    try (DirectoryStream<Path> sandboxes = Files.newDirectoryStream(dir, Files::isDirectory)) {
      for (Path sandbox : sandboxes) {
        String id = sandbox.getFileName().toString();
        Optional<Marker> marker = Marker.read(sandbox.resolve("paddock.json"), id);
        if (marker.isEmpty()) {
          continue;
        }
        Marker known = withKnownPort(marker.get());
        if (procFs.isAlive(known.pid(), known.startTime())) {
          handles.add(known.toHandle(NAME));
        } else if (known.port() == 0 && !spawned.containsKey(id)) {
          // A start cut short (the control plane died before the agent served, or the agent
          // refused to serve): nothing ever ran in it, so its directory and cgroup go now.
          destroy(known.toHandle(NAME));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + dir, e);
    }
    return handles;
  }

  private Marker live(RuntimeHandle handle, String operation) {
    Marker marker = withKnownPort(Marker.fromHandle(handle));
    if (!procFs.isAlive(marker.pid(), marker.startTime())) {
      throw new SandboxException(
          "Sandbox " + marker.sandboxId() + " is not running, so it cannot be " + operation + ".",
          Optional.of(marker.sandboxId()));
    }
    return marker;
  }

  private Freezer freezer(Marker marker) {
    return freezers.open(
        marker.freezer(), marker.cgroup(), marker.sandboxId(), marker.pid(), marker.startTime());
  }
}
