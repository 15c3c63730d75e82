package dev.paddock.controlplane;

import dev.paddock.agent.AgentServer;
import dev.paddock.agent.core.AgentConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * The "machine" that {@link InProcessBackend} instances share in a test: the runtimes (real
 * agent-servers in this JVM) outlive any one backend instance, the way processes or containers
 * outlive a control plane, so a second backend instance can find and adopt them after a simulated
 * restart. Also holds the test's failure switches. Test code only.
 */
public final class InProcessHost implements AutoCloseable {
  /** One sandbox's runtime: its directory, its agent's config, and the agent while it runs. */
  static final class Runtime {
    final String sandboxId;
    final Path root;
    final AgentConfig config;
    // Guarded by this Runtime's monitor: null while paused.
    AgentServer server;

    Runtime(String sandboxId, Path root, AgentConfig config, AgentServer server) {
      this.sandboxId = sandboxId;
      this.root = root;
      this.config = config;
      this.server = server;
    }
  }

  private final Path root;
  private final Map<String, Runtime> runtimes = new ConcurrentHashMap<>();
  private final Map<String, dev.paddock.api.spi.RuntimeRequest> requests =
      new ConcurrentHashMap<>();
  private final AtomicBoolean failNextDestroy = new AtomicBoolean();
  private final CountDownLatch release = new CountDownLatch(1);

  public InProcessHost() {
    try {
      root = Files.createTempDirectory("paddock-cp-test-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Path root() {
    return root;
  }

  Map<String, Runtime> runtimes() {
    return runtimes;
  }

  /** The last request each sandbox was started with (what the control plane asked for). */
  public Map<String, dev.paddock.api.spi.RuntimeRequest> requests() {
    return requests;
  }

  /** The next destroy fails (as a runtime that will not die would), then destroys work again. */
  public void failNextDestroy() {
    failNextDestroy.set(true);
  }

  boolean takeDestroyFailure() {
    return failNextDestroy.getAndSet(false);
  }

  /** Lets every start of a "held" spec proceed. */
  public void releaseHeldStarts() {
    release.countDown();
  }

  void awaitRelease() throws InterruptedException {
    release.await();
  }

  /** The sandbox ids that still have a runtime on this host. */
  public List<String> sandboxIds() {
    return List.copyOf(runtimes.keySet());
  }

  Optional<Runtime> runtime(String sandboxId) {
    return Optional.ofNullable(runtimes.get(sandboxId));
  }

  /** Whether this host's directory is empty (every runtime's directory was removed). */
  public boolean directoryEmpty() throws IOException {
    try (Stream<Path> children = Files.list(root)) {
      return children.findAny().isEmpty();
    }
  }

  /** Stops every agent still running and removes the host directory. */
  @Override
  public void close() {
    releaseHeldStarts();
    for (Runtime runtime : runtimes.values()) {
      synchronized (runtime) {
        if (runtime.server != null) {
          runtime.server.close();
          runtime.server = null;
        }
      }
    }
    runtimes.clear();
    FileTrees.deleteIfExists(root);
  }
}
