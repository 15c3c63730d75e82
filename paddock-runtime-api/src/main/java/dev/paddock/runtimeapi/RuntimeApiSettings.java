package dev.paddock.runtimeapi;

import dev.paddock.api.settings.Setting;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** The settings {@code paddock runtime-api} reads besides {@code RUNTIME} and its backend's. */
public final class RuntimeApiSettings {
  /** Where it listens. */
  public static final Setting<String> HOST =
      Setting.string("PADDOCK_RUNTIME_API_HOST", "the address the runtime API binds")
          .withDefault("127.0.0.1");

  public static final Setting<Integer> PORT =
      Setting.integer(
              "PADDOCK_RUNTIME_API_PORT", "the runtime API's port (0: any free port)", 0, 65535)
          .withDefault(8010);

  /** The key every caller sends in {@code X-API-Key}; required. */
  public static final Setting<String> KEY =
      Setting.string(
              "PADDOCK_RUNTIME_API_KEY",
              "the key callers send in X-API-Key (OpenHands' SANDBOX_API_KEY); at least 16 bytes")
          .requiring(v -> v.getBytes(StandardCharsets.UTF_8).length >= 16, "at least 16 bytes")
          .secret();

  public static final Setting<Integer> MAX_SANDBOXES =
      Setting.integer(
              "PADDOCK_RUNTIME_API_MAX_SANDBOXES",
              "the most sessions (running, paused or failed) this runtime API holds at once",
              1,
              100_000)
          .withDefault(20);

  /** The secret session and agent admin keys are derived from. */
  public static final Setting<String> SECRET =
      Setting.string(
              "PADDOCK_RUNTIME_API_SECRET",
              "the secret the session keys it issues are derived from (at least 32 bytes)")
          .requiring(v -> v.getBytes(StandardCharsets.UTF_8).length >= 32, "at least 32 bytes")
          .withDefaultText("random per process")
          .secret();

  /** Every setting above, for help and {@code paddock config}. */
  public static final List<Setting<?>> ALL = List.of(HOST, PORT, KEY, MAX_SANDBOXES, SECRET);

  private RuntimeApiSettings() {}
}
