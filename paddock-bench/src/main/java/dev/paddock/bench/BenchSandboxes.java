package dev.paddock.bench;

import dev.paddock.api.KeyDigest;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.SandboxBackend;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * Sandboxes the bench starts straight on a backend, as the control plane would: each with a fresh
 * session key the bench knows, an id under this run's prefix, and its destruction registered with
 * the bench's {@link Cleanup} the moment it exists. Thread-safe as far as the backend is.
 */
final class BenchSandboxes {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final SandboxBackend backend;
  private final SandboxSpec spec;
  private final String prefix;
  private final Cleanup cleanup;

  BenchSandboxes(SandboxBackend backend, SandboxSpec spec, String prefix, Cleanup cleanup) {
    this.backend = backend;
    this.spec = spec;
    this.prefix = prefix;
    this.cleanup = cleanup;
  }

  /** A started sandbox: its handle and the session key its agent accepts. */
  record Sandbox(RuntimeHandle handle, String key) {
    String container() {
      return handle.attributes().get("container");
    }

    /** The agent's port on the host (host networking). */
    int port() {
      return Integer.parseInt(handle.attributes().get("port"));
    }
  }

  SandboxBackend backend() {
    return backend;
  }

  /** Starts sandbox {@code <prefix>-<n>}; returns once its agent printed the ready line. */
  Sandbox start(int n) {
    String key = randomHex();
    RuntimeRequest request =
        new RuntimeRequest(
            prefix + "-" + n,
            spec,
            Map.of(),
            List.of(KeyDigest.sha256Hex(key)),
            KeyDigest.sha256Hex(randomHex()));
    RuntimeHandle handle = backend.start(request);
    cleanup.register(() -> backend.destroy(handle));
    return new Sandbox(handle, key);
  }

  void destroy(Sandbox sandbox) {
    backend.destroy(sandbox.handle());
  }

  /** Sandboxes of this run the backend still manages (after cleanup: none). */
  List<RuntimeHandle> left() {
    return backend.list().stream().filter(h -> h.sandboxId().startsWith(prefix + "-")).toList();
  }

  private static String randomHex() {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }
}
