package dev.paddock.api.spi;

import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.settings.Setting;
import java.util.List;
import java.util.Map;

/**
 * Registers a backend under its {@code RUNTIME} names; found with {@link java.util.ServiceLoader}.
 */
public interface SandboxBackendProvider {
  /** The names that select this backend, e.g. {@code ["process", "local"]}. */
  List<String> names();

  /**
   * The settings this backend reads, so {@code paddock server --help} and {@code paddock config}
   * list them and a typo in one is warned about. Default: none.
   */
  default List<Setting<?>> settings() {
    return List.of();
  }

  /**
   * Creates the backend.
   *
   * @param settings the control plane's settings (config file, environment and flags, flattened;
   *     each declared setting under its declared name)
   * @throws dev.paddock.api.settings.SettingsException when a setting is invalid; it names it
   */
  SandboxBackend create(Map<String, String> settings);

  /**
   * What {@code paddock doctor} checks for this backend without starting a sandbox (the engine
   * answering, its version, the default image and its architecture...), in order. Never throws: a
   * problem is a {@link HostCheck.Verdict#FAIL} with a fix. Default: none.
   *
   * @param settings as for {@link #create}
   */
  default List<HostCheck> hostChecks(Map<String, String> settings) {
    return List.of();
  }

  /** The spec service that goes with this backend: the two are always chosen together. */
  SandboxSpecService specs(Map<String, String> settings);
}
