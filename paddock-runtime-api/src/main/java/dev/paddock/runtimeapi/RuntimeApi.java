package dev.paddock.runtimeapi;

import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.spi.SandboxBackend;

/**
 * A running runtime API: OpenHands' runtime-API protocol over one local backend. Sessions are kept
 * in its data directory (key digests only, keys derived, never stored) and taken back when it
 * starts again; closing it stops serving and leaves the runtimes running for the next start, the
 * caller's {@code /stop} or the backend.
 */
public interface RuntimeApi extends AutoCloseable {
  /**
   * Takes back the sessions saved in {@code config.dataDir()}, binds and starts serving.
   *
   * @param backend the local backend that runs the sessions (not closed by this API)
   * @param specs the backend's specs: the warm configs, and what {@code image} names resolve to
   * @throws java.io.UncheckedIOException when the address cannot be bound
   * @throws IllegalStateException when the saved sessions cannot be read
   */
  static RuntimeApi start(
      RuntimeApiConfig config, SandboxBackend backend, SandboxSpecService specs) {
    return RuntimeApiServer.start(config, backend, specs);
  }

  /** The port it listens on. */
  int port();

  /** Stops serving; sessions' runtimes keep running. */
  @Override
  void close();
}
