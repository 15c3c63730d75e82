package dev.paddock.backend.docker;

import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.ListedRuntime;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.RuntimeStats;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.docker.DockerEngine.EngineException;
import dev.paddock.backend.docker.DockerEngine.Response;
import dev.paddock.backend.kit.RuntimeBundle;
import dev.paddock.backend.kit.protocol.AgentSecrets;
import dev.paddock.backend.kit.protocol.AliveProbe;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Sandboxes as Docker containers, one per sandbox, through the Engine API. The agent-server comes
 * from the {@link RuntimeBundle} mounted read-only, runs as root inside the container with a small
 * capability set, and runs every command as the unprivileged {@code run-as} user. The workspace is
 * a named volume labelled like the container ({@link ContainerSpec}), kept while the container
 * exists (so a container that crashed restarts on its files) and removed with it. Limits come from
 * the spec, else from the backend's defaults.
 *
 * <p>Everything is found again through labels ({@code paddock.managed}, {@code paddock.sandbox-id},
 * {@code paddock.instance}) and the container's own state, so a restarted control plane lists,
 * inspects, pauses and destroys what an earlier one started. This class is the façade: the create
 * body is {@link ContainerSpec}, the start protocol {@link ContainerStart}, the engine calls {@link
 * Containers}, handles {@link DockerHandles}. Thread-safe; calls for one sandbox are serialised by
 * the control plane.
 */
final class DockerBackend implements SandboxBackend {
  static final String NAME = "docker";
  static final String LABEL_MANAGED = ContainerSpec.LABEL_MANAGED;
  static final String LABEL_SANDBOX = ContainerSpec.LABEL_SANDBOX;

  /** A container that ran and stopped (killed, crashed, or stopped outside Paddock). */
  static final Kind STOPPED =
      Kind.of("docker.stopped", "The sandbox's container stopped; its workspace is kept.");

  /** A container that no longer exists (removed outside Paddock). */
  static final Kind GONE =
      Kind.of(
          "docker.gone",
          "The sandbox's container is gone; delete the sandbox and start a new one.");

  /** A container the kernel's OOM killer ended after it had started. */
  static final Kind OOM_KILLED =
      Kind.of(
          "docker.oom-killed",
          "The sandbox's container was killed for using too much memory; its workspace is kept.");

  private final DockerSettings settings;
  private final DockerEngine engine;
  private final Containers containers;
  private final DockerHandles handles;
  private final ImagePuller images;
  private final ContainerStart starts;
  private final ImageAgentRelaunch relaunches;
  private final AliveProbe probe = new AliveProbe(Duration.ofSeconds(1));
  private final ScheduledExecutorService watchdog;
  private final Set<String> starting = ConcurrentHashMap.newKeySet();

  /** The handles this backend made or adopted, by container id: bulk listing reuses their port. */
  private final Map<String, RuntimeHandle> known = new ConcurrentHashMap<>();

  DockerBackend(DockerSettings settings, DockerEngine engine, Path bundle) {
    this.settings = settings;
    this.engine = engine;
    this.containers = new Containers(engine, settings.stopGrace());
    this.handles = new DockerHandles(settings);
    this.images = new ImagePuller(engine, settings.pull().equals("missing"));
    this.watchdog =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "paddock-docker-watchdog");
              t.setDaemon(true);
              return t;
            });
    ContainerSpec spec = new ContainerSpec(settings, bundle, new EngineFeatures(engine));
    this.starts = new ContainerStart(settings, containers, spec, handles, watchdog);
    this.relaunches = new ImageAgentRelaunch(containers, starts, probe);
  }

  @Override
  public String name() {
    return NAME;
  }

  DockerEngine engine() {
    return engine;
  }

  /** The container now, typed (tests read it too). */
  Optional<ContainerState> inspectContainer(String container) {
    return containers.inspect(container);
  }

  // ---------------------------------------------------------------- start

  @Override
  public RuntimeHandle start(RuntimeRequest request) {
    boolean own = AgentServerLaunch.applies(request.spec());
    String secrets =
        own ? "" : AgentSecrets.lines(request.sessionKeyDigests(), request.adminKeyDigest());
    String sandboxId = request.sandboxId();
    starting.add(sandboxId);
    try {
      images.ensure(request.spec().imageReference());
      String container = created(request);
      try {
        return remembered(
            own
                ? starts.launchImageAgent(sandboxId, container, probe)
                : starts.launch(sandboxId, container, secrets));
      } catch (RuntimeException e) {
        RuntimeStartException failure = asStartFailure(e, "starting " + container);
        removeQuietly(containers, container, failure);
        removeVolumeQuietly(sandboxId, failure);
        throw failure;
      }
    } catch (EngineException e) {
      throw failure(Kind.ENGINE_UNREACHABLE, e.getMessage(), e);
    } finally {
      starting.remove(sandboxId);
    }
  }

  private String created(RuntimeRequest request) {
    try {
      return starts.create(request, request.spec().imageReference());
    } catch (RuntimeStartException e) {
      if (!e.getMessage().contains("already exists")) {
        removeVolumeQuietly(request.sandboxId(), e); // never another live sandbox's volume
      }
      throw e;
    }
  }

  // ---------------------------------------------------------------- inspect

  /** One-shot from the engine's stats endpoint (see {@link DockerStats}). */
  @Override
  public Optional<RuntimeStats> stats(RuntimeHandle handle) {
    return DockerStats.read(engine, DockerHandles.container(handle));
  }

  /**
   * From the engine's logs of the container (json-file, at most 1 MiB: past that the engine drops
   * the oldest lines, so offsets then skip what it dropped).
   */
  @Override
  public Optional<byte[]> agentLog(RuntimeHandle handle, long offset, int maxBytes) {
    Response logs;
    try {
      logs =
          engine.get("/containers/" + DockerHandles.container(handle) + "/logs?stdout=1&stderr=1");
    } catch (EngineException e) {
      return Optional.empty();
    }
    if (!logs.ok()) {
      return Optional.empty();
    }
    byte[] text = ContainerOutput.demultiplexBytes(logs.body());
    int from = (int) Math.min(text.length, Math.max(0, offset));
    return Optional.of(
        java.util.Arrays.copyOfRange(
            text, from, (int) Math.min(text.length, from + (long) maxBytes)));
  }

  @Override
  public RuntimeState inspect(RuntimeHandle handle) {
    Optional<ContainerState> found;
    try {
      found = containers.inspect(DockerHandles.container(handle));
    } catch (EngineException e) {
      // The engine is down: we cannot say the sandbox is gone, only that it is not usable now.
      return error(new RuntimeFailure(Kind.ENGINE_UNREACHABLE, e.getMessage()));
    }
    if (found.isEmpty()) {
      return RuntimeState.missing();
    }
    ContainerState state = found.get();
    return switch (state.status()) {
      case "running" -> running(handle);
      case "paused" -> state(SandboxStatus.PAUSED);
      case "created", "restarting" -> state(SandboxStatus.STARTING);
      case "removing" -> RuntimeState.missing();
      default ->
          state.name().equals(ContainerSpec.pausedName(handle.sandboxId()))
              ? state(SandboxStatus.PAUSED)
              : error(stopped(state));
    };
  }

  /**
   * Why a container that is neither running nor paused stopped, as the engine recorded it: exit
   * code, signal and OOM flag are safe to show, and its volume still holds the workspace, which a
   * resume restarts it on.
   */
  static RuntimeFailure stopped(ContainerState state) {
    Kind kind = state.oomKilled() ? OOM_KILLED : STOPPED;
    String safe =
        "The sandbox's container stopped ("
            + state.exitSummary()
            + "); its workspace is kept: resume the sandbox to restart it.";
    return new RuntimeFailure(
        kind,
        safe,
        "container " + state.id() + " is " + state.status() + " (" + state.exitSummary() + ")");
  }

  private RuntimeState running(RuntimeHandle handle) {
    if (!probe.answers(handles.probeHost(), DockerHandles.port(handle))) {
      return state(SandboxStatus.STARTING);
    }
    return new RuntimeState(SandboxStatus.RUNNING, handles.urls(handle), Optional.empty());
  }

  private static RuntimeState state(SandboxStatus status) {
    return new RuntimeState(status, List.of(), Optional.empty());
  }

  private static RuntimeState error(RuntimeFailure failure) {
    return new RuntimeState(SandboxStatus.ERROR, List.of(), Optional.of(failure));
  }

  // ---------------------------------------------------------------- pause, resume

  @Override
  public void pause(RuntimeHandle handle) {
    try {
      if (handle.launchKeyed()) {
        // Its key cannot be revoked at the agent: stopped, it refuses every key at once.
        String container = DockerHandles.container(handle);
        containers.stop(container);
        containers.rename(container, ContainerSpec.pausedName(handle.sandboxId()));
        return;
      }
      containers.pause(DockerHandles.container(handle), handle.sandboxId());
    } catch (EngineException e) {
      throw unreachable(handle, e);
    }
  }

  @Override
  public RuntimeHandle resume(RuntimeHandle handle) {
    String container = DockerHandles.container(handle);
    long deadline = System.nanoTime() + settings.readyTimeout().toNanos();
    try {
      ContainerState state =
          containers
              .inspect(container)
              .orElseThrow(
                  () ->
                      failure(
                          GONE,
                          "container " + container + " of " + handle.sandboxId() + " is gone"));
      RuntimeHandle resumed = thawOrRestart(handle, state);
      awaitAnswer(container, DockerHandles.port(resumed), deadline);
      return remembered(resumed);
    } catch (EngineException e) {
      throw failure(Kind.ENGINE_UNREACHABLE, e.getMessage(), e);
    }
  }

  /**
   * A new container on the same volume with {@code sessionKey} (see {@link ImageAgentRelaunch}).
   */
  @Override
  public RuntimeHandle relaunch(RuntimeHandle handle, String sessionKey) {
    if (!handle.launchKeyed()) {
      throw failure(Kind.UNKNOWN, "sandbox " + handle.sandboxId() + " runs Paddock's agent");
    }
    try {
      return remembered(relaunches.relaunch(handle, sessionKey));
    } catch (EngineException e) {
      throw failure(Kind.ENGINE_UNREACHABLE, e.getMessage(), e);
    }
  }

  private RuntimeHandle thawOrRestart(RuntimeHandle handle, ContainerState state) {
    return switch (state.status()) {
      case "paused" -> {
        containers.unpause(state.id(), handle.sandboxId());
        yield handle;
      }
      case "running" -> handle;
      case "exited", "created", "dead" ->
          handle.launchKeyed()
              ? starts.launchImageAgent(handle.sandboxId(), state.id(), probe)
              : restart(handle, state);
      default -> throw failure(Kind.UNKNOWN, "container " + state.id() + " is " + state.status());
    };
  }

  private void awaitAnswer(String container, int port, long deadline) {
    while (!probe.answers(handles.probeHost(), port)) {
      if (System.nanoTime() - deadline >= 0) {
        throw failure(
            Kind.NEVER_READY,
            "agent of " + container + " did not answer within " + settings.readyTimeout());
      }
      EngineRetry.sleep(Duration.ofMillis(10));
    }
  }

  /**
   * Starts a stopped container's sandbox again with the same workspace volume, in a new container
   * of the same configuration ({@link ContainerRecreation}: a stopped container's input cannot be
   * trusted after a failed start). Its agent gets only the admin key digest (from the label): the
   * control plane hands it the new session key next.
   */
  private RuntimeHandle restart(RuntimeHandle handle, ContainerState state) {
    String admin = state.label(ContainerSpec.LABEL_ADMIN).orElse("");
    String secrets = AgentSecrets.lines(List.of(), admin);
    if (secrets.isEmpty()) {
      throw failure(Kind.UNKNOWN, "container " + state.id() + " has no admin key label");
    }
    // A fresh container on the same volume: the stopped one's input may be closed for good.
    String fresh =
        new ContainerRecreation(containers).recreate(handle.sandboxId(), state.id(), b -> b);
    return starts.launch(handle.sandboxId(), fresh, secrets);
  }

  // ---------------------------------------------------------------- destroy, list

  @Override
  public void destroy(RuntimeHandle handle) {
    known.remove(handle.attributes().getOrDefault(DockerHandles.CONTAINER, ""));
    containers.remove(DockerHandles.container(handle));
    // A resume may have re-created the container (ContainerRecreation): an older handle then
    // names the removed one, while the sandbox's current container (or a half-made "-next") still
    // holds the workspace volume.
    String name = ContainerSpec.containerName(handle.sandboxId());
    removeIfTheSandboxs(handle.sandboxId(), name);
    removeIfTheSandboxs(handle.sandboxId(), name + "-next");
    containers.removeVolume(ContainerSpec.volumeName(handle.sandboxId()));
  }

  /** Removes the container named {@code name} if it carries {@code sandboxId}'s label. */
  private void removeIfTheSandboxs(String sandboxId, String name) {
    Response inspected = containers.engine().get("/containers/" + name + "/json");
    if (!inspected.ok()) {
      return;
    }
    Object labels = ContainerState.map(inspected.json().get("Config")).get("Labels");
    if (sandboxId.equals(ContainerState.map(labels).get(LABEL_SANDBOX))) {
      containers.remove(name);
    }
  }

  @Override
  public List<RuntimeHandle> list() {
    List<RuntimeHandle> found = new ArrayList<>();
    Set<String> withContainer = new HashSet<>();
    for (Map<String, Object> summary : containers.listContainers(ours())) {
      String sandboxId =
          String.valueOf(ContainerState.map(summary.get("Labels")).get(LABEL_SANDBOX));
      withContainer.add(sandboxId);
      if (!starting.contains(sandboxId)) {
        listed(sandboxId, String.valueOf(summary.get("Id"))).ifPresent(found::add);
      }
    }
    found.addAll(orphanVolumes(withContainer));
    return found;
  }

  /** Workspace volumes whose container is gone: a create cut short, or a removal half done. */
  private List<RuntimeHandle> orphanVolumes(Set<String> withContainer) {
    List<RuntimeHandle> orphans = new ArrayList<>();
    for (Map<String, Object> volume : containers.listVolumes(ours())) {
      String sandboxId =
          String.valueOf(ContainerState.map(volume.get("Labels")).get(LABEL_SANDBOX));
      if (!withContainer.contains(sandboxId) && !starting.contains(sandboxId)) {
        orphans.add(DockerHandles.volumeOnly(sandboxId, String.valueOf(volume.get("Name"))));
      }
    }
    return orphans;
  }

  // Only this control plane's: another Paddock on the same engine (a second data directory)
  // keeps its own, and neither reaps the other's as orphans.
  private List<String> ours() {
    return List.of(
        LABEL_MANAGED + "=true", ContainerSpec.LABEL_INSTANCE + "=" + settings.instance());
  }

  private Optional<RuntimeHandle> listed(String sandboxId, String container) {
    Optional<ContainerState> state = containers.inspect(container);
    if (state.isEmpty()) {
      return Optional.empty();
    }
    if (state.get().is("created") && createdBefore(state.get(), settings.readyTimeout())) {
      // A start cut short before the container ran: nothing ever ran in it.
      containers.remove(container);
      containers.removeVolume(ContainerSpec.volumeName(sandboxId));
      return Optional.empty();
    }
    return Optional.of(adopted(sandboxId, state.get()));
  }

  /**
   * One labelled container list ({@code docker ps -a}) instead of an inspect per sandbox: running
   * and paused containers are judged from the list (plus the agent's {@code /alive} for running
   * ones); only containers the list shows stopped, or whose agent port this backend has not seen
   * yet, are inspected, for their exit code, OOM flag or ready line.
   */
  @Override
  public List<ListedRuntime> listWithState() {
    List<ListedRuntime> found = new ArrayList<>();
    Set<String> withContainer = new HashSet<>();
    for (Map<String, Object> summary : containers.listContainers(ours())) {
      String sandboxId =
          String.valueOf(ContainerState.map(summary.get("Labels")).get(LABEL_SANDBOX));
      withContainer.add(sandboxId);
      if (!starting.contains(sandboxId)) {
        listedWithState(sandboxId, summary).ifPresent(found::add);
      }
    }
    for (RuntimeHandle volume : orphanVolumes(withContainer)) {
      found.add(new ListedRuntime(volume, RuntimeState.missing()));
    }
    return found;
  }

  private Optional<ListedRuntime> listedWithState(String sandboxId, Map<String, Object> summary) {
    String id = String.valueOf(summary.get("Id"));
    String status = String.valueOf(summary.get("State"));
    RuntimeHandle handle = known.get(id);
    if (handle != null && (status.equals("running") || status.equals("paused"))) {
      RuntimeState state = status.equals("paused") ? state(SandboxStatus.PAUSED) : running(handle);
      return Optional.of(new ListedRuntime(handle, state));
    }
    return listed(sandboxId, id).map(h -> new ListedRuntime(h, inspect(h)));
  }

  private RuntimeHandle remembered(RuntimeHandle handle) {
    known.put(handle.attributes().getOrDefault(DockerHandles.CONTAINER, ""), handle);
    return handle;
  }

  /** The handle of a container found by its labels (after a control-plane restart). */
  private RuntimeHandle adopted(String sandboxId, ContainerState state) {
    int port = 0;
    boolean own = state.label(AgentServerLaunch.LABEL_AGENT_SERVER).isPresent();
    if (!own && state.hostNetwork() && state.is("running")) {
      // The first ready line since the container last started: later output could be shaped by
      // what runs in the sandbox, the agent's own ready line is always the first.
      long since = state.startedAt().map(Instant::getEpochSecond).orElse(0L);
      Response logs =
          engine.get("/containers/" + state.id() + "/logs?stdout=1&stderr=1&since=" + since);
      if (logs.ok()) {
        port = ContainerOutput.firstReadyPort(ContainerOutput.demultiplex(logs.body())).orElse(0);
      }
    }
    try {
      RuntimeHandle handle = handles.handle(sandboxId, state, port);
      return own || port > 0 || !state.hostNetwork() ? remembered(handle) : handle;
    } catch (RuntimeStartException e) {
      return handles.portless(sandboxId, state);
    }
  }

  private static boolean createdBefore(ContainerState state, Duration age) {
    return state.created().map(c -> c.plus(age).isBefore(Instant.now())).orElse(false);
  }

  @Override
  public void close() {
    watchdog.shutdownNow();
  }

  // ---------------------------------------------------------------- failures

  private void removeVolumeQuietly(String sandboxId, RuntimeException failure) {
    try {
      containers.removeVolume(ContainerSpec.volumeName(sandboxId));
    } catch (RuntimeException cleanup) {
      failure.addSuppressed(cleanup);
    }
  }

  static void removeQuietly(Containers containers, String container, RuntimeException failure) {
    try {
      containers.remove(container);
    } catch (RuntimeException cleanup) {
      failure.addSuppressed(cleanup);
    }
  }

  private static dev.paddock.api.SandboxException unreachable(
      RuntimeHandle handle, RuntimeException e) {
    return new dev.paddock.api.SandboxException(
        "The container engine cannot be reached right now.", Optional.of(handle.sandboxId()), e);
  }

  private static RuntimeStartException asStartFailure(RuntimeException e, String what) {
    if (e instanceof RuntimeStartException start) {
      return start;
    }
    if (e instanceof EngineException) {
      return failure(Kind.ENGINE_UNREACHABLE, what + ": " + e.getMessage(), e);
    }
    return failure(Kind.UNKNOWN, what + ": " + e, e);
  }

  static RuntimeStartException failure(Kind kind, String detail) {
    return new RuntimeStartException(new RuntimeFailure(kind, detail));
  }

  static RuntimeStartException failure(Kind kind, String detail, Throwable cause) {
    return new RuntimeStartException(new RuntimeFailure(kind, detail), cause);
  }
}
