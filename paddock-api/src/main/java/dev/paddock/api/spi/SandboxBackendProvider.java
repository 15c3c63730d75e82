package dev.paddock.api.spi;

import dev.paddock.api.SandboxSpecService;
import java.util.Map;

/**
 * Registers a backend under its {@code RUNTIME} names; found with {@link java.util.ServiceLoader}.
 */
public interface SandboxBackendProvider {
  /** The names that select this backend, e.g. {@code ["process", "local"]}. */
  java.util.List<String> names();

  /**
   * Creates the backend.
   *
   * @param settings the control plane's settings (environment and config file, flattened)
   */
  SandboxBackend create(Map<String, String> settings);

  /** The spec service that goes with this backend: the two are always chosen together. */
  SandboxSpecService specs(Map<String, String> settings);
}
