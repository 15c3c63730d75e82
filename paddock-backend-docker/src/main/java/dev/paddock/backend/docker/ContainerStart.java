package dev.paddock.backend.docker;

import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.backend.docker.DockerEngine.EngineException;
import dev.paddock.backend.docker.DockerEngine.Hijacked;
import dev.paddock.backend.docker.DockerEngine.Response;
import dev.paddock.backend.kit.protocol.AliveProbe;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The start protocol of a sandbox's container: its labelled workspace volume, then the container
 * (created, not started), then attach, start, the key digests on standard input, and the agent's
 * ready line with the port it bound. A container that stops first is diagnosed from its exit code,
 * its OOM flag and its last output. Thread-safe; one call per container at a time.
 */
final class ContainerStart {
  private static final System.Logger LOG = System.getLogger("paddock.backend.docker");

  private final DockerSettings settings;
  private final Containers containers;
  private final ContainerSpec spec;
  private final DockerHandles handles;
  private final ScheduledExecutorService watchdog;

  ContainerStart(
      DockerSettings settings,
      Containers containers,
      ContainerSpec spec,
      DockerHandles handles,
      ScheduledExecutorService watchdog) {
    this.settings = settings;
    this.containers = containers;
    this.spec = spec;
    this.handles = handles;
    this.watchdog = watchdog;
  }

  /**
   * Creates the volume, then the container (not started); both carry the sandbox's labels from the
   * moment they exist, so a control plane that dies now leaves nothing a restart cannot find.
   *
   * @return the container's id
   */
  String create(RuntimeRequest request, String image) {
    String name = ContainerSpec.containerName(request.sandboxId());
    containers.createVolume(
        ContainerSpec.volumeName(request.sandboxId()), spec.ownership(request.sandboxId()));
    Response created;
    try {
      created =
          containers
              .engine()
              .post("/containers/create?name=" + enc(name), spec.body(request, image));
    } catch (EngineException e) {
      // The engine may have made the container and lost only its answer: remove it if it is ours.
      removeIfUnstarted(name, request.sandboxId(), e);
      throw e;
    }
    if (created.status() == 409) {
      // Never removed here: it may be a live sandbox with this id.
      throw DockerBackend.failure(Kind.UNKNOWN, "container " + name + " already exists");
    }
    if (created.status() == 404) {
      throw DockerBackend.failure(Kind.IMAGE_MISSING, "create: " + created.message());
    }
    if (!created.ok()) {
      Kind kind = FailureText.classify(created.message()).orElse(Kind.UNKNOWN);
      throw DockerBackend.failure(kind, "create refused: " + created.message());
    }
    String id = String.valueOf(created.json().get("Id"));
    refuseUnenforcedLimits(name, id, created.json().get("Warnings"));
    return id;
  }

  // e.g. "Your kernel does not support memory limitation or the cgroup is not mounted. Limitation
  // discarded.": the sandbox would run without the limits it was promised.
  private void refuseUnenforcedLimits(String name, String id, Object warnings) {
    if (!(warnings instanceof List<?> list) || list.isEmpty()) {
      return;
    }
    String text = String.valueOf(list).toLowerCase(Locale.ROOT);
    if (text.contains("limit") || text.contains("discarded") || text.contains("swap")) {
      RuntimeStartException failure =
          DockerBackend.failure(
              Kind.UNKNOWN, "the engine would not enforce the sandbox's limits: " + list);
      DockerBackend.removeQuietly(containers, id, failure);
      throw failure;
    }
    LOG.log(System.Logger.Level.WARNING, "docker backend: create of {0} warned: {1}", name, list);
  }

  private void removeIfUnstarted(String name, String sandboxId, RuntimeException failure) {
    try {
      containers
          .inspect(name)
          .filter(c -> c.label(ContainerSpec.LABEL_SANDBOX).filter(sandboxId::equals).isPresent())
          .filter(c -> c.is("created"))
          .ifPresent(c -> containers.remove(name));
    } catch (RuntimeException cleanup) {
      failure.addSuppressed(cleanup);
    }
  }

  /** Attaches, starts, hands over the key digests, waits for the ready line. */
  RuntimeHandle launch(String sandboxId, String container, String secrets) {
    long deadline = System.nanoTime() + settings.readyTimeout().toNanos();
    try (Hijacked attach =
        containers
            .engine()
            .hijack("/containers/" + container + "/attach?stream=1&stdin=1&stdout=1&stderr=1")) {
      Response started = containers.post("/containers/" + container + "/start");
      if (!started.ok() && started.status() != 304) {
        throw startRefused(started);
      }
      handOver(sandboxId, attach, secrets);
      ContainerOutput output = new ContainerOutput(attach.output());
      OptionalInt port = awaitReady(attach, output, deadline);
      if (port.isEmpty()) {
        throw exitedBeforeReady(container, output.tail(), deadline);
      }
      ContainerState state = containers.inspect(container).orElseThrow(() -> vanished(container));
      return handles.handle(sandboxId, state, port.getAsInt());
    }
  }

  /**
   * Starts a container whose image brings its own agent-server and waits for its {@code GET /alive}
   * (there is no ready line to read): the agent port is the labelled one with host networking, else
   * the engine's published port for 8000. A container that stops first is diagnosed as {@link
   * #launch} does, from its exit and the last lines of its log.
   */
  RuntimeHandle launchImageAgent(String sandboxId, String container, AliveProbe probe) {
    long deadline = System.nanoTime() + settings.readyTimeout().toNanos();
    Response started = containers.post("/containers/" + container + "/start");
    if (!started.ok() && started.status() != 304) {
      throw startRefused(started);
    }
    while (true) {
      ContainerState state = containers.inspect(container).orElseThrow(() -> vanished(container));
      if (!state.alive()) {
        throw exitedBeforeReady(container, logTail(container), deadline);
      }
      RuntimeHandle handle = handles.handle(sandboxId, state, 0);
      if (state.is("running") && probe.answers(handles.probeHost(), DockerHandles.port(handle))) {
        return handle;
      }
      if (System.nanoTime() - deadline >= 0) {
        throw DockerBackend.failure(
            Kind.NEVER_READY,
            "the image's agent-server did not answer GET /alive within "
                + settings.readyTimeout().toMillis()
                + " ms"
                + tailDetail(logTail(container)));
      }
      EngineRetry.sleep(Duration.ofMillis(50));
    }
  }

  private List<String> logTail(String container) {
    Response logs =
        containers.engine().get("/containers/" + container + "/logs?stdout=1&stderr=1&tail=20");
    if (!logs.ok()) {
      return List.of();
    }
    return ContainerOutput.demultiplex(logs.body()).lines().filter(l -> !l.isBlank()).toList();
  }

  private static void handOver(String sandboxId, Hijacked attach, String secrets) {
    try {
      attach.input().write(secrets.getBytes(StandardCharsets.UTF_8));
      attach.closeInput();
    } catch (IOException e) {
      // The agent is already gone: the output tells how.
      LOG.log(System.Logger.Level.DEBUG, "sandbox {0}: stdin closed early: {1}", sandboxId, e);
    }
  }

  private OptionalInt awaitReady(Hijacked attach, ContainerOutput output, long deadline) {
    long left = deadline - System.nanoTime();
    ScheduledFuture<?> alarm =
        watchdog.schedule(attach::close, Math.max(1, left), TimeUnit.NANOSECONDS);
    try {
      return output.awaitReady();
    } catch (IOException e) {
      if (System.nanoTime() - deadline >= 0) {
        throw neverReady(output.tail());
      }
      return OptionalInt.empty();
    } finally {
      alarm.cancel(false);
    }
  }

  private RuntimeStartException neverReady(List<String> tail) {
    return DockerBackend.failure(
        Kind.NEVER_READY,
        "agent printed no ready line within "
            + settings.readyTimeout().toMillis()
            + " ms"
            + tailDetail(tail));
  }

  /** The output ended: the container stopped (or never will say it is ready). */
  private RuntimeStartException exitedBeforeReady(
      String container, List<String> tail, long deadline) {
    if (System.nanoTime() - deadline >= 0) {
      return neverReady(tail);
    }
    ContainerState state = awaitStopped(container, deadline);
    Kind kind = exitKind(state.exitCode(), state.oomKilled(), tail);
    String raw =
        "container "
            + container
            + " stopped while starting ("
            + state.exitSummary()
            + ")"
            + tailDetail(tail);
    // The shared kinds' messages (the contract suite holds every backend to them); the exit code
    // and signal are in the raw detail, which the control plane logs.
    return new RuntimeStartException(new RuntimeFailure(kind, raw));
  }

  static Kind exitKind(int code, boolean oom, List<String> tail) {
    if (oom) {
      return Kind.OUT_OF_MEMORY;
    }
    Optional<Kind> read = FailureText.classify(tail);
    if (read.isPresent()) {
      return read.get();
    }
    return switch (code) {
      case 121, 122, 123, 126, 127 -> Kind.IMAGE_UNSUITABLE;
      case 124 -> Kind.CALLBACK_UNREACHABLE;
      default ->
          tail.stream().anyMatch(ContainerStart::isBindFailure) ? Kind.PORT_TAKEN : Kind.EXITED;
    };
  }

  // The attach stream can end a moment before the engine records the exit.
  private ContainerState awaitStopped(String container, long deadline) {
    ContainerState state = containers.inspect(container).orElseThrow(() -> vanished(container));
    for (int i = 0; i < 50 && state.is("running") && System.nanoTime() - deadline < 0; i++) {
      EngineRetry.sleep(Duration.ofMillis(20));
      state = containers.inspect(container).orElseThrow(() -> vanished(container));
    }
    return state;
  }

  private static RuntimeStartException startRefused(Response response) {
    String message = response.message();
    String lower = message.toLowerCase(Locale.ROOT);
    Kind kind;
    Optional<Kind> read = FailureText.classify(message);
    if (read.isPresent()) {
      kind = read.get();
    } else if (lower.contains("port is already allocated")
        || lower.contains("address already in use")
        || lower.contains("no available port")) {
      kind = Kind.PORT_TAKEN;
    } else if (lower.contains("no such file or directory")
        || lower.contains("executable file not found")) {
      kind = Kind.IMAGE_UNSUITABLE;
    } else if (lower.contains("out of memory") || lower.contains("oom")) {
      kind = Kind.OUT_OF_MEMORY;
    } else {
      kind = Kind.UNKNOWN;
    }
    return DockerBackend.failure(kind, "the engine refused to start the container: " + message);
  }

  private static RuntimeStartException vanished(String container) {
    return DockerBackend.failure(
        Kind.EXITED, "container " + container + " vanished while starting");
  }

  private static String tailDetail(List<String> tail) {
    return tail.isEmpty() ? "; it printed nothing" : "; last output:\n" + String.join("\n", tail);
  }

  private static boolean isBindFailure(String line) {
    String lower = line.toLowerCase(Locale.ROOT);
    return lower.contains("address already in use") || lower.contains("bindexception");
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
