package dev.paddock.cli;

import dev.paddock.api.settings.Setting;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * The settings {@code paddock server} itself reads: where it listens, which backend, the store, the
 * secrets it starts from, logging and metrics.
 */
final class ServerSettings {
  static final Setting<String> HOST =
      Setting.string("PADDOCK_HOST", "the address the REST API binds").withDefault("127.0.0.1");
  static final Setting<Integer> PORT =
      Setting.integer("PADDOCK_PORT", "the REST API's port (0: any free port)", 0, 65535)
          .withDefault(3000);
  static final Setting<String> RUNTIME =
      Setting.string("RUNTIME", "the backend: process (also local), docker or remote")
          .withDefault("process");
  static final Setting<String> ADMIN_KEY =
      Setting.string(
              "PADDOCK_ADMIN_KEY", "the first admin's API key on an empty store (else generated)")
          .secret();
  static final Setting<String> MASTER_SECRET =
      Setting.string(
              "PADDOCK_MASTER_SECRET",
              "the secret agent admin keys are derived from; the same on every replica (at least"
                  + " 32 bytes)")
          .requiring(v -> v.getBytes(StandardCharsets.UTF_8).length >= 32, "at least 32 bytes")
          .withDefaultText("<data dir>/master.secret, created on first start")
          .secret();
  static final Setting<String> DATABASE_URL =
      Setting.string("PADDOCK_DATABASE_URL", "a PostgreSQL JDBC URL")
          .withDefaultText("SQLite in the data directory");
  static final Setting<String> DATABASE_USER =
      Setting.string("PADDOCK_DATABASE_USER", "the database user").withDefault("");
  static final Setting<String> DATABASE_PASSWORD =
      Setting.string("PADDOCK_DATABASE_PASSWORD", "the database password").secret();
  static final Setting<Duration> RECONCILE =
      Setting.duration(
              "PADDOCK_RECONCILE_SECONDS",
              "how often runtimes are reconciled with the store (adopt, fail, reap)")
          .requiring(d -> !d.isZero(), "a positive duration such as 10 (seconds) or 500ms")
          .withDefault(Duration.ofSeconds(10));
  static final Setting<String> METRICS_KEY =
      Setting.string("PADDOCK_METRICS_KEY", "a key /metrics requires (Bearer); unset: open")
          .secret();
  static final Setting<String> LOG_FORMAT =
      Setting.oneOf("PADDOCK_LOG_FORMAT", "log lines as text or as JSON objects", "text", "json")
          .withDefault("text");
  static final Setting<String> LOG_LEVEL =
      Setting.oneOf(
              "PADDOCK_LOG_LEVEL",
              "the lowest level logged (JDK loggers never below info)",
              "trace",
              "debug",
              "info",
              "warn",
              "error")
          .withDefault("info");

  // Webhook quotas, read by ApiServerConfig from the settings map handed on.
  static final Setting<Long> WEBHOOK_MAX_REQUEST_BYTES =
      Setting.size("PADDOCK_WEBHOOK_MAX_REQUEST_BYTES", "largest webhook request body")
          .withDefault(1L << 20);
  static final Setting<Integer> WEBHOOK_MAX_EVENTS =
      Setting.integer(
              "PADDOCK_WEBHOOK_MAX_EVENTS", "events kept per conversation", 1, Integer.MAX_VALUE)
          .withDefault(10_000);
  static final Setting<Long> WEBHOOK_MAX_BYTES =
      Setting.size("PADDOCK_WEBHOOK_MAX_BYTES", "bytes of events kept per conversation")
          .withDefault(16L << 20);
  static final Setting<Integer> WEBHOOK_MAX_CONVERSATIONS =
      Setting.integer(
              "PADDOCK_WEBHOOK_MAX_CONVERSATIONS", "conversations per sandbox", 1, 1_000_000)
          .withDefault(10);

  static final List<Setting<?>> ALL =
      List.of(
          HOST,
          PORT,
          RUNTIME,
          ADMIN_KEY,
          MASTER_SECRET,
          DATABASE_URL,
          DATABASE_USER,
          DATABASE_PASSWORD,
          RECONCILE,
          METRICS_KEY,
          LOG_FORMAT,
          LOG_LEVEL,
          WEBHOOK_MAX_REQUEST_BYTES,
          WEBHOOK_MAX_EVENTS,
          WEBHOOK_MAX_BYTES,
          WEBHOOK_MAX_CONVERSATIONS);

  /**
   * Names under the checked prefixes that other programs read (the CLI client, the agent, tests),
   * so seeing them in the server's environment is no typo.
   */
  static final List<String> KNOWN_ELSEWHERE =
      List.of(
          "PADDOCK_URL",
          "PADDOCK_API_KEY",
          "PADDOCK_AGENT_ADMIN_KEY",
          "PADDOCK_SANDBOX_ID",
          "PADDOCK_MANAGED",
          "PADDOCK_CALLBACK_URL",
          "PADDOCK_TEST_");

  private ServerSettings() {}
}
