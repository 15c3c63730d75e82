package dev.paddock.backend.process;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxSpec;
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
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
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

  /** A spec whose image brings its own agent-server: only image-based backends can run one. */
  static final Kind FOREIGN_AGENT =
      Kind.of(
          "process.foreign-agent-server",
          "This sandbox's spec brings its own agent-server in an image; the process backend runs"
              + " only Paddock's agent. Use an image-based backend such as Docker.");

  /** An agent the kernel's OOM killer ended after it had started (its memory limit was hit). */
  static final Kind OOM_KILLED =
      Kind.of(
          "process.oom-killed",
          "The sandbox's agent was killed for using too much memory; its workspace is kept.");

  private static final System.Logger LOG = System.getLogger("paddock.backend.process");

  private final ProcessSettings settings;
  private final ProcFs procFs;
  private final Freezers freezers;
  private final AliveProbe alive;
  private final AgentStarter starter;
  private final Teardown teardown;
  private final ConcurrentMap<String, StartedAgent> spawned = new ConcurrentHashMap<>();

  /**
   * The OOM-kill count of each sandbox's memory cgroup when this instance last saw its agent alive:
   * a count that grew by the time the agent is found dead says the OOM killer took it (commands
   * killed earlier, while it lived, do not).
   */
  private final ConcurrentMap<String, Long> oomKillsSeen = new ConcurrentHashMap<>();

  /** Sandboxes whose start runs in this instance now: list() leaves their half-made state. */
  private final Set<String> starting = ConcurrentHashMap.newKeySet();

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
    if (request.spec().agentServer() == SandboxSpec.AgentServer.IMAGE) {
      throw RuntimeStartException.of(
          FOREIGN_AGENT,
          "spec " + request.spec().id() + " says agent_server: image; this backend has no image");
    }
    starting.add(request.sandboxId());
    try {
      StartedAgent agent = starter.start(request);
      spawned.put(request.sandboxId(), agent);
      sawAlive(agent.marker());
      return agent.marker().toHandle(NAME);
    } finally {
      starting.remove(request.sandboxId());
    }
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
      return dead(marker);
    }
    sawAlive(marker);
    if (freezer(marker).frozen()) {
      return state(SandboxStatus.PAUSED, List.of());
    }
    if (marker.port() == 0 && !spawned.containsKey(marker.sandboxId())) {
      // Its start was cut short with an earlier control plane before the agent said where it
      // listens: after the ready deadline it will never be usable.
      return pastReady(marker)
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
   * A dead agent whose sandbox directory is still there (its workspace is kept) is ERROR, saying
   * how it stopped: killed by the OOM killer (its memory cgroup counted a kill since this instance
   * last saw it alive), with the exit code and signal when this instance spawned it and saw it
   * exit, else that it is no longer running. Only a started agent has a handle, so it had been
   * running: "exited while starting" would be untrue. A sandbox whose agent never served, or whose
   * directory is gone, is MISSING.
   */
  private RuntimeState dead(Marker marker) {
    SandboxLayout layout = SandboxLayout.of(settings.sandboxesDir(), marker.sandboxId());
    if (!layout.served() || !Files.isDirectory(layout.workspace())) {
      return RuntimeState.missing();
    }
    return new RuntimeState(SandboxStatus.ERROR, List.of(), Optional.of(stopped(marker)));
  }

  private void sawAlive(Marker marker) {
    if (!marker.limitCgroups().isEmpty()) {
      oomKillsSeen.put(marker.sandboxId(), CgroupLimits.oomKills(marker.limitCgroups()));
    }
  }

  private boolean oomKilledSinceSeen(Marker marker) {
    Long seen = oomKillsSeen.get(marker.sandboxId());
    return seen != null && CgroupLimits.oomKills(marker.limitCgroups()) > seen;
  }

  private RuntimeFailure stopped(Marker marker) {
    Optional<StartedAgent> seen =
        Optional.ofNullable(spawned.get(marker.sandboxId()))
            .filter(agent -> agent.marker().pid() == marker.pid() && !agent.process().isAlive());
    Optional<String> exit = seen.map(a -> StartDiagnosis.exitText(a.process().exitValue()));
    String raw =
        "agent pid "
            + marker.pid()
            + " of "
            + marker.sandboxId()
            + " "
            + exit.orElse("is gone")
            + seen.map(a -> StartDiagnosis.tailDetail(a.output().tail())).orElse("");
    String kept = "; its workspace is kept: resume the sandbox to restart it.";
    if (oomKilledSinceSeen(marker)) {
      return new RuntimeFailure(
          OOM_KILLED,
          "The sandbox's agent was killed for using too much memory"
              + exit.map(e -> " (it " + e + ")").orElse("")
              + kept,
          raw + "; its memory cgroup counted an OOM kill");
    }
    return new RuntimeFailure(
        Kind.STOPPED,
        "The sandbox's agent stopped while it was running: it "
            + exit.orElse("is no longer running")
            + kept,
        raw);
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
   * Thaws the sandbox and returns once its agent answers; the handle does not change. An agent that
   * died (before the resume, or while it thaws: a SIGKILL sent to a frozen agent lands then) is
   * started again on the same directory and cgroups ({@link AgentStarter#restart}), with a new
   * handle and no session key: the caller hands it a new one.
   *
   * @throws dev.paddock.api.spi.RuntimeStartException when the agent cannot be started again,
   *     NEVER_READY when it does not answer within the ready timeout, EXITED when the sandbox's
   *     directory is gone
   */
  @Override
  public RuntimeHandle resume(RuntimeHandle handle) {
    Marker marker = withKnownPort(Marker.fromHandle(handle));
    if (procFs.isAlive(marker.pid(), marker.startTime())) {
      freezer(marker).thaw();
      boolean answered =
          Poll.until(
              () ->
                  alive.answers(marker.port()) || !procFs.isAlive(marker.pid(), marker.startTime()),
              settings.readyTimeout());
      if (!answered) {
        throw StartDiagnosis.neverReady(settings.readyTimeout(), List.of());
      }
      if (procFs.isAlive(marker.pid(), marker.startTime())) {
        return handle;
      }
    }
    return restart(marker);
  }

  private RuntimeHandle restart(Marker dead) {
    if (!Files.isDirectory(
        SandboxLayout.of(settings.sandboxesDir(), dead.sandboxId()).workspace())) {
      throw RuntimeStartException.of(
          Kind.EXITED,
          "agent " + dead.pid() + " of " + dead.sandboxId() + " and its directory are gone");
    }
    LOG.log(
        System.Logger.Level.INFO,
        "sandbox {0}: its agent (pid {1}) is gone; starting it again on its workspace",
        dead.sandboxId(),
        dead.pid());
    StartedAgent agent = starter.restart(dead);
    Optional.ofNullable(spawned.put(dead.sandboxId(), agent))
        .ifPresent(old -> old.output().awaitEnd(Duration.ofSeconds(2)));
    sawAlive(agent.marker());
    return agent.marker().toHandle(NAME);
  }

  @Override
  public void destroy(RuntimeHandle handle) {
    Marker marker = Marker.fromHandle(handle);
    SandboxLayout layout = SandboxLayout.of(settings.sandboxesDir(), marker.sandboxId());
    teardown.run(marker, freezer(marker), layout, settings.stopGrace());
    oomKillsSeen.remove(marker.sandboxId());
    Optional.ofNullable(spawned.remove(marker.sandboxId()))
        .ifPresent(agent -> agent.output().awaitEnd(Duration.ofSeconds(2)));
  }

  /**
   * Every sandbox directory with a live agent, or whose agent died after it had served (its
   * workspace is kept: inspect says ERROR, resume starts it again). What a start cut short left (by
   * a control-plane crash, or an agent that never served) is torn down here, directory and cgroups:
   * nothing ever ran in it. Starts under way in this instance are left alone.
   */
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
        if (!starting.contains(id)) {
          listed(sandbox, id).ifPresent(handles::add);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + dir, e);
    }
    return handles;
  }

  private Optional<RuntimeHandle> listed(Path sandbox, String id) {
    Optional<Marker> marker = Marker.read(sandbox.resolve("paddock.json"), id);
    if (marker.isEmpty()) {
      reclaimUnmarked(sandbox, id);
      return Optional.empty();
    }
    Marker known = withKnownPort(marker.get());
    SandboxLayout layout = SandboxLayout.of(settings.sandboxesDir(), id);
    if (procFs.isAlive(known.pid(), known.startTime()) || layout.served()) {
      return Optional.of(known.toHandle(NAME));
    }
    if (known.pid() < 0 && !pastReady(known)) {
      // A pending marker: a start (perhaps another replica's on this host) is about to spawn its
      // agent. Listed, so a delete finds it, but not torn down before its ready deadline.
      return Optional.of(known.toHandle(NAME));
    }
    destroy(known.toHandle(NAME));
    return Optional.empty();
  }

  /**
   * Also a directory without a marker yet, or with a pending one: {@link #list} spares those until
   * the ready deadline (another replica may be about to spawn), but the caller holds the sandbox's
   * claim, so no start of it is coming.
   */
  @Override
  public void reclaim(String sandboxId) {
    SandboxBackend.super.reclaim(sandboxId);
    SandboxLayout layout = SandboxLayout.of(settings.sandboxesDir(), sandboxId);
    if (!starting.contains(sandboxId) && Files.isDirectory(layout.root())) {
      Marker pending = starter.pending(sandboxId, layout.workspace());
      teardown.run(pending, freezer(pending), layout, Duration.ZERO);
    }
  }

  /**
   * A directory without a marker: a start cut short between creating it and writing its pending
   * marker a moment later, or something that is no sandbox. Reclaimed once older than the ready
   * timeout (no start of any instance takes that long to write it); other names are left alone.
   */
  private void reclaimUnmarked(Path sandbox, String id) {
    try {
      SandboxLayout layout = SandboxLayout.of(settings.sandboxesDir(), id);
      Instant modified = Files.getLastModifiedTime(sandbox).toInstant();
      if (modified.plus(settings.readyTimeout()).isBefore(Instant.now())) {
        LOG.log(System.Logger.Level.INFO, "process backend: reclaiming unmarked {0}", sandbox);
        Marker pending = starter.pending(id, layout.workspace());
        teardown.run(pending, freezer(pending), layout, Duration.ZERO);
      }
    } catch (IOException | IllegalArgumentException e) {
      LOG.log(System.Logger.Level.DEBUG, "process backend: leaving {0}: {1}", sandbox, e);
    }
  }

  /** Whether the agent's ready deadline passed: a start that has not served by now never will. */
  private boolean pastReady(Marker marker) {
    return marker.createdAt().plus(settings.readyTimeout()).isBefore(Instant.now());
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
