package dev.paddock.controlplane;

import dev.paddock.agent.AgentServer;
import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.core.KeyRing;
import dev.paddock.api.ExposedUrl;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.ListedRuntime;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test stand-in for a real backend, so the control plane and its contract suite can run before (and
 * independently of) the process backend: each sandbox is a <em>real</em> agent-server, started in
 * this JVM on a loopback port 0 with the request's key digests, in its own directory under an
 * {@link InProcessHost}. What it cannot do honestly is freeze: an agent in the test JVM cannot be
 * stopped with SIGSTOP, so {@link #pause} stops the agent (running commands die) and {@link
 * #resume} starts a new one on the same workspace, on a new port, with the same key ring (so keys
 * revoked before the pause stay revoked). Specs drive failures: command {@code ["--fail"]} fails
 * the start as an agent exiting would; {@code ["--hold"]} waits until the host releases held
 * starts.
 */
public final class InProcessBackend implements SandboxBackend {
  public static final String NAME = "in-process";
  public static final List<String> FAIL = List.of("--fail");
  public static final List<String> HOLD = List.of("--hold");

  /** What a failing start reports as raw detail: must only ever reach the log. */
  public static final String RAW_DETAIL = "agent exited with code 3: token=RAW-SECRET at /srv/x";

  private final InProcessHost host;
  private final AtomicInteger inspections = new AtomicInteger();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  public InProcessBackend(InProcessHost host) {
    this.host = host;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public RuntimeHandle start(RuntimeRequest request) {
    if (request.spec().command().equals(FAIL)) {
      throw new RuntimeStartException(new RuntimeFailure(RuntimeFailure.Kind.EXITED, RAW_DETAIL));
    }
    if (request.spec().command().equals(HOLD)) {
      try {
        host.awaitRelease();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new RuntimeStartException(
            new RuntimeFailure(RuntimeFailure.Kind.UNKNOWN, "interrupted while held"));
      }
    }
    host.requests().put(request.sandboxId(), request);
    Path root = host.root().resolve(request.sandboxId());
    AgentConfig config = config(request, root);
    AgentServer server = AgentServer.start(config);
    InProcessHost.Runtime runtime =
        new InProcessHost.Runtime(request.sandboxId(), root, config, server);
    if (host.runtimes().putIfAbsent(request.sandboxId(), runtime) != null) {
      server.close();
      throw new RuntimeStartException(
          new RuntimeFailure(
              RuntimeFailure.Kind.UNKNOWN, "runtime exists: " + request.sandboxId()));
    }
    return handle(runtime, server);
  }

  private static AgentConfig config(RuntimeRequest request, Path root) {
    try {
      Files.createDirectories(root.resolve("workspace"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return AgentConfig.builder()
        .host("127.0.0.1")
        .port(0)
        .workspace(root.resolve("workspace"))
        .fileRoots(List.of(root))
        .eventsDir(root.resolve("events"))
        .killGrace(Duration.ofMillis(200))
        .forkServer(false)
        .sessionKeys(KeyRing.ofDigests(request.sessionKeyDigests()))
        .adminKeys(KeyRing.ofDigests(List.of(request.adminKeyDigest())))
        .build();
  }

  private RuntimeHandle handle(InProcessHost.Runtime runtime, AgentServer server) {
    return new RuntimeHandle(
        runtime.sandboxId, NAME, Map.of("port", Integer.toString(server.port())));
  }

  /** How many single {@link #inspect} calls this backend answered (bulk listings not counted). */
  public int inspections() {
    return inspections.get();
  }

  @Override
  public RuntimeState inspect(RuntimeHandle handle) {
    inspections.incrementAndGet();
    if (engineAway) {
      // As a container backend answers when its engine went away after the listing.
      return new RuntimeState(
          SandboxStatus.ERROR,
          List.of(),
          Optional.of(new RuntimeFailure(RuntimeFailure.Kind.ENGINE_UNREACHABLE, "engine away")));
    }
    return state(handle);
  }

  private volatile boolean engineAway;

  /**
   * While set, the listing still answers but every inspect says the engine cannot be reached: the
   * moment an engine goes down in the middle of a reconcile pass.
   */
  public void engineAway(boolean away) {
    engineAway = away;
  }

  /** One pass over the host, as a backend with a bulk call would answer. */
  @Override
  public List<ListedRuntime> listWithState() {
    return list().stream()
        .map(handle -> new ListedRuntime(handle, engineAway ? inspect(handle) : state(handle)))
        .toList();
  }

  private RuntimeState state(RuntimeHandle handle) {
    Optional<InProcessHost.Runtime> runtime = host.runtime(handle.sandboxId());
    if (runtime.isEmpty()) {
      return RuntimeState.missing();
    }
    synchronized (runtime.get()) {
      AgentServer server = runtime.get().server;
      if (server == null) {
        return new RuntimeState(SandboxStatus.PAUSED, List.of(), Optional.empty());
      }
      if (!handle.attributes().get("port").equals(Integer.toString(server.port()))) {
        return RuntimeState.missing(); // a stale handle: the agent it named is gone
      }
      String url = "http://127.0.0.1:" + server.port();
      if (!alive(url)) {
        return new RuntimeState(SandboxStatus.STARTING, List.of(), Optional.empty());
      }
      return new RuntimeState(
          SandboxStatus.RUNNING,
          List.of(new ExposedUrl(ExposedUrl.AGENT_SERVER, url, server.port())),
          Optional.empty());
    }
  }

  private boolean alive(String url) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url + "/alive")).timeout(Duration.ofSeconds(2)).build();
    try {
      return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Stops the agent (see the class comment: a stand-in for freezing). Idempotent. */
  @Override
  public void pause(RuntimeHandle handle) {
    host.runtime(handle.sandboxId())
        .ifPresent(
            runtime -> {
              synchronized (runtime) {
                if (runtime.server != null) {
                  runtime.server.close();
                  runtime.server = null;
                }
              }
            });
  }

  /** Starts a new agent on the same workspace and key ring; returns its (new) handle. */
  @Override
  public RuntimeHandle resume(RuntimeHandle handle) {
    InProcessHost.Runtime runtime =
        host.runtime(handle.sandboxId())
            .orElseThrow(
                () ->
                    new RuntimeStartException(
                        new RuntimeFailure(RuntimeFailure.Kind.EXITED, "runtime is gone")));
    synchronized (runtime) {
      if (runtime.server == null) {
        runtime.server = AgentServer.start(runtime.config);
      }
      return handle(runtime, runtime.server);
    }
  }

  @Override
  public void destroy(RuntimeHandle handle) {
    if (host.takeDestroyFailure()) {
      throw new IllegalStateException("injected: the runtime would not die");
    }
    InProcessHost.Runtime runtime = host.runtimes().remove(handle.sandboxId());
    if (runtime == null) {
      return;
    }
    synchronized (runtime) {
      if (runtime.server != null) {
        runtime.server.close();
        runtime.server = null;
      }
    }
    FileTrees.deleteIfExists(runtime.root);
  }

  @Override
  public List<RuntimeHandle> list() {
    return host.runtimes().values().stream()
        .map(
            r -> {
              synchronized (r) {
                return new RuntimeHandle(
                    r.sandboxId,
                    NAME,
                    Map.of(
                        "port", r.server == null ? "paused" : Integer.toString(r.server.port())));
              }
            })
        .toList();
  }

  @Override
  public void close() {
    http.close();
  }
}
