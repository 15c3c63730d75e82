package dev.paddock.backend.process;

import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.backend.kit.StartDiagnosis;
import dev.paddock.backend.kit.protocol.AgentSecrets;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Starts one agent-server: creates the sandbox directory, spawns the agent on {@code 127.0.0.1}
 * port 0 with an environment built from scratch, moves it into the sandbox's freezer before it can
 * fork anything, hands it the key digests on standard input, and waits for its ready line, which
 * carries the port the agent bound itself (so there is no bind-then-close race and no polling). Any
 * failure tears down what was made and throws a classified {@link RuntimeStartException}.
 */
final class AgentStarter {

  private final ProcessSettings settings;
  private final ProcessLauncher launcher;
  private final ProcFs procFs;
  private final Freezers freezers;
  private final CgroupLimits limits;
  private final Teardown teardown;

  AgentStarter(
      ProcessSettings settings,
      ProcessLauncher launcher,
      ProcFs procFs,
      Freezers freezers,
      CgroupLimits limits,
      Teardown teardown) {
    this.settings = settings;
    this.launcher = launcher;
    this.procFs = procFs;
    this.freezers = freezers;
    this.limits = limits;
    this.teardown = teardown;
  }

  StartedAgent start(RuntimeRequest request) {
    SandboxLayout layout = SandboxLayout.of(settings.sandboxesDir(), request.sandboxId());
    String secrets = AgentSecrets.lines(request.sessionKeyDigests(), request.adminKeyDigest());
    Path workspace = workspace(request, layout);
    AgentLaunch launch =
        new AgentLaunch(
            argv(request, layout, workspace),
            environment(request, layout),
            request.adminKeyDigest());
    createDirectory(layout, workspace);
    // Before anything can run in it: a control plane that dies from here on leaves a marker that
    // names every cgroup the sandbox may get, so the next one's list() reclaims all of it.
    Marker pending = recordPending(request.sandboxId(), launch, layout, workspace);
    long deadline = System.nanoTime() + settings.readyTimeout().toNanos();
    Process process;
    try {
      process = spawn(launch, layout);
    } catch (RuntimeStartException e) {
      deleteQuietly(layout, e);
      throw e;
    }
    Freezer freezer;
    Marker marker;
    try {
      long startTime = procFs.stat(process.pid()).map(ProcStat::startTime).orElse(-1L);
      freezer = freezers.create(request.sandboxId(), process.pid(), startTime);
      CgroupLimits.Applied applied =
          limits.apply(request.sandboxId(), process.pid(), request.spec().resources());
      marker = spawned(request.sandboxId(), process.pid(), startTime, freezer, applied, workspace);
    } catch (RuntimeException e) {
      process.destroyForcibly();
      RuntimeStartException failure = StartDiagnosis.unexpected("preparing the agent's freezer", e);
      abort(pending, freezer(pending), layout, process, failure);
      throw failure;
    }
    try {
      return launch(process, marker, freezer, layout, secrets, deadline);
    } catch (RuntimeException e) {
      RuntimeStartException failure =
          e instanceof RuntimeStartException start
              ? start
              : StartDiagnosis.unexpected("starting the agent of " + request.sandboxId(), e);
      abort(marker, freezer, layout, process, failure);
      throw failure;
    }
  }

  /**
   * Starts the agent of a sandbox whose agent died (killed, OOM-killed, crashed) again, on the same
   * directory and cgroups, with only the admin key's digest: the control plane hands it a new
   * session key next, so no key of the dead agent works on it. Whatever the dead agent left running
   * is killed first, as a container's restart would. On failure the sandbox is left as it was (its
   * marker names the dead agent again, directory and cgroups kept), so a later resume may retry.
   *
   * @throws RuntimeStartException classified failure
   */
  StartedAgent restart(Marker dead) {
    SandboxLayout layout = SandboxLayout.of(settings.sandboxesDir(), dead.sandboxId());
    AgentLaunch launch =
        AgentLaunch.read(layout.launch())
            .orElseThrow(
                () ->
                    RuntimeStartException.of(
                        Kind.UNKNOWN, "no readable " + layout.launch() + " to restart from"));
    Freezer old = freezer(dead);
    teardown.killLeftovers(dead, old);
    deleteReadyFile(layout);
    long deadline = System.nanoTime() + settings.readyTimeout().toNanos();
    Process process = spawn(launch, layout);
    long startTime = procFs.stat(process.pid()).map(ProcStat::startTime).orElse(-1L);
    Marker marker = dead.restarted(process.pid(), startTime, Instant.now());
    Freezer freezer = freezer(marker);
    try {
      limits.rejoin(marker.limitCgroups(), process.pid(), marker.sandboxId());
      return launch(
          process,
          marker,
          freezer,
          layout,
          AgentSecrets.lines(List.of(), launch.adminDigest()),
          deadline);
    } catch (RuntimeException e) {
      RuntimeStartException failure =
          e instanceof RuntimeStartException start
              ? start
              : StartDiagnosis.unexpected("restarting the agent of " + dead.sandboxId(), e);
      process.destroyForcibly();
      try {
        // Back to the dead agent's marker: its port and exit are what inspect reports.
        dead.write(layout.marker());
      } catch (IOException cleanup) {
        failure.addSuppressed(cleanup);
      }
      throw failure;
    }
  }

  private Freezer freezer(Marker marker) {
    return freezers.open(
        marker.freezer(), marker.cgroup(), marker.sandboxId(), marker.pid(), marker.startTime());
  }

  /**
   * The marker of a sandbox whose agent is not spawned yet: no pid, the freezer cgroup it will get,
   * and every cgroup its limits may get (teardown removes the absent ones as a no-op).
   */
  Marker pending(String sandboxId, Path workspace) {
    Freezer freezer = freezers.create(sandboxId, -1, -1);
    return new Marker(
        sandboxId,
        -1,
        -1,
        0,
        freezer.kind(),
        freezer.cgroup(),
        Instant.now(),
        limits.candidates(sandboxId),
        List.of(),
        Optional.of(workspace.toString()));
  }

  private Marker recordPending(
      String sandboxId, AgentLaunch launch, SandboxLayout layout, Path workspace) {
    try {
      Marker pending = pending(sandboxId, workspace);
      pending.write(layout.marker());
      launch.write(layout.launch());
      return pending;
    } catch (IOException | RuntimeException e) {
      RuntimeStartException failure =
          RuntimeStartException.of(
              e instanceof IOException io && StartDiagnosis.isDiskFull(io)
                  ? Kind.DISK_FULL
                  : Kind.UNKNOWN,
              "cannot write " + layout.marker() + ": " + e,
              e);
      deleteQuietly(layout, failure);
      throw failure;
    }
  }

  private static void deleteReadyFile(SandboxLayout layout) {
    try {
      Files.deleteIfExists(layout.readyFile());
    } catch (IOException e) {
      throw StartDiagnosis.unexpected("cannot remove " + layout.readyFile(), e);
    }
  }

  private StartedAgent launch(
      Process process,
      Marker marker,
      Freezer freezer,
      SandboxLayout layout,
      String secrets,
      long deadline) {
    // Written before the agent gets its keys (it cannot answer without them): the marker names
    // the live agent from the moment it could serve anyone.
    writeMarker(marker, layout);
    attach(freezer, process);
    AgentOutput output =
        AgentOutput.start(
            marker.sandboxId(), process.getInputStream(), layout.log(), settings.logMaxBytes());
    sendSecrets(process, secrets);
    int port = awaitReady(process, output, deadline);
    Marker ready = marker.withPort(port);
    writeMarker(ready, layout);
    markServed(layout);
    return new StartedAgent(process, output, ready);
  }

  /**
   * The marker of a just-spawned agent: its pid, start time, the freezer it will join and the
   * cgroups carrying its limits.
   */
  private static Marker spawned(
      String sandboxId,
      long pid,
      long startTime,
      Freezer freezer,
      CgroupLimits.Applied limits,
      Path workspace) {
    return new Marker(
        sandboxId,
        pid,
        startTime,
        0,
        freezer.kind(),
        freezer.cgroup(),
        Instant.now(),
        limits.cgroups(),
        limits.unenforced(),
        Optional.of(workspace.toString()));
  }

  /**
   * Where the agent works: the sandbox's {@code workspace/} for the spec's {@code "."}, a directory
   * inside it for a relative working dir, or an existing absolute directory (the process backend
   * isolates nothing, so a host directory is the caller's choice).
   */
  private static Path workspace(RuntimeRequest request, SandboxLayout layout) {
    String dir = request.spec().workingDir().strip();
    if (dir.isEmpty() || dir.equals(".")) {
      return layout.workspace();
    }
    Path given = Path.of(dir);
    if (given.isAbsolute()) {
      if (!Files.isDirectory(given)) {
        throw RuntimeStartException.of(
            Kind.UNKNOWN, "working directory " + given + " does not exist on this host");
      }
      return given.normalize();
    }
    Path inside = layout.workspace().resolve(given).normalize();
    if (!inside.startsWith(layout.workspace())) {
      throw RuntimeStartException.of(
          Kind.UNKNOWN, "working directory " + dir + " leaves the sandbox's workspace");
    }
    return inside;
  }

  /**
   * The spec's command, else the configured or default agent command, plus this backend's options.
   */
  private List<String> argv(RuntimeRequest request, SandboxLayout layout, Path workspace) {
    List<String> argv =
        new ArrayList<>(
            request.spec().command().isEmpty()
                ? AgentCommand.resolve(settings)
                : request.spec().command());
    argv.addAll(
        List.of(
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--workspace",
            workspace.toString(),
            "--events-dir",
            layout.events().toString(),
            "--ready-file",
            layout.readyFile().toString(),
            "--secrets-stdin"));
    if (settings.confineFiles()) {
      argv.addAll(List.of("--file-root", workspace.toString()));
    }
    return argv;
  }

  /**
   * Built from scratch: the control plane's own environment holds its secrets. The spec's
   * variables, then the request's, may replace PATH and LANG; the labels always win.
   */
  private Map<String, String> environment(RuntimeRequest request, SandboxLayout layout) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("PATH", settings.path());
    env.put("HOME", layout.workspace().toString());
    env.put("LANG", settings.lang());
    env.putAll(request.spec().initialEnv());
    env.putAll(request.env());
    env.put("HOME", layout.workspace().toString());
    env.put(ProcFs.LABEL, request.sandboxId());
    env.put("PADDOCK_MANAGED", "true");
    return env;
  }

  private static void createDirectory(SandboxLayout layout, Path workspace) {
    try {
      layout.create();
      if (workspace.startsWith(layout.workspace())) {
        Files.createDirectories(workspace);
      }
    } catch (FileAlreadyExistsException e) {
      // Never cleaned up here: the directory may belong to a live sandbox with this id.
      throw RuntimeStartException.of(
          Kind.UNKNOWN, "sandbox directory " + layout.root() + " already exists", e);
    } catch (IOException e) {
      try {
        layout.delete();
      } catch (IOException cleanup) {
        e.addSuppressed(cleanup);
      }
      throw RuntimeStartException.of(
          StartDiagnosis.isDiskFull(e) ? Kind.DISK_FULL : Kind.UNKNOWN,
          "cannot create " + layout.root() + ": " + e,
          e);
    }
  }

  private Process spawn(AgentLaunch launch, SandboxLayout layout) {
    try {
      return launcher.start(launch.argv(), layout.root(), launch.env());
    } catch (IOException e) {
      throw StartDiagnosis.binaryMissing(launch.argv().get(0), e);
    }
  }

  /**
   * Moves the agent into its cgroup right after spawn: the JVM takes far longer to start than this
   * write, so everything it forks inherits the cgroup. An agent that already exited cannot be
   * moved; its exit is diagnosed by {@link #awaitReady}.
   */
  private static void attach(Freezer freezer, Process process) {
    try {
      freezer.attach(process.pid());
    } catch (IOException | RuntimeException e) {
      if (process.isAlive()) {
        throw StartDiagnosis.unexpected("cannot move the agent into " + freezer.cgroup(), e);
      }
    }
  }

  private static void sendSecrets(Process process, String secrets) {
    try (OutputStream stdin = process.getOutputStream()) {
      stdin.write(secrets.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      // A broken pipe means the agent already exited: awaitReady reports how.
      if (process.isAlive()) {
        throw StartDiagnosis.unexpected("cannot hand the agent its keys", e);
      }
    }
  }

  private static void markServed(SandboxLayout layout) {
    try {
      layout.markServed();
    } catch (IOException e) {
      throw StartDiagnosis.unexpected("cannot write in " + layout.root(), e);
    }
  }

  private static void writeMarker(Marker marker, SandboxLayout layout) {
    try {
      marker.write(layout.marker());
    } catch (IOException e) {
      throw StartDiagnosis.unexpected("cannot write " + layout.marker(), e);
    }
  }

  private int awaitReady(Process process, AgentOutput output, long deadline) {
    OptionalInt port;
    try {
      port = output.ready().get(remaining(deadline), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw StartDiagnosis.neverReady(settings.readyTimeout(), output.tail());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw StartDiagnosis.unexpected("interrupted while waiting for the agent", e);
    } catch (ExecutionException e) {
      throw StartDiagnosis.unexpected("reading the agent's output", e.getCause());
    }
    if (port.isPresent()) {
      return port.getAsInt();
    }
    return exitedBeforeReady(process, output, deadline);
  }

  /** Its output ended without a ready line: it exited (or closed its output and hangs). */
  private int exitedBeforeReady(Process process, AgentOutput output, long deadline) {
    try {
      if (process.waitFor(remaining(deadline), TimeUnit.NANOSECONDS)) {
        throw StartDiagnosis.exited(process.exitValue(), output.tail());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw StartDiagnosis.unexpected("interrupted while waiting for the agent", e);
    }
    throw StartDiagnosis.neverReady(settings.readyTimeout(), output.tail());
  }

  private static long remaining(long deadline) {
    return Math.max(0, deadline - System.nanoTime());
  }

  private void abort(
      Marker marker,
      Freezer freezer,
      SandboxLayout layout,
      Process process,
      RuntimeStartException failure) {
    process.destroyForcibly();
    try {
      teardown.run(marker, freezer, layout, Duration.ZERO);
    } catch (RuntimeException cleanup) {
      failure.addSuppressed(cleanup);
    }
  }

  private static void deleteQuietly(SandboxLayout layout, RuntimeException failure) {
    try {
      layout.delete();
    } catch (IOException cleanup) {
      failure.addSuppressed(cleanup);
    }
  }
}
