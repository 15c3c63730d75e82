package dev.paddock.server;

import dev.paddock.api.settings.Setting;
import dev.paddock.store.WebhookQuota;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The REST API's own limits and keys. {@link #fromSettings} is the one place that reads them from
 * {@code PADDOCK_*} settings.
 *
 * @param webhookMaxRequestBytes the largest webhook request body (413 beyond)
 * @param webhookQuota what one sandbox may keep through webhooks
 * @param metricsKey when present, {@code /metrics} needs {@code Authorization: Bearer <key>}
 */
public record ApiServerConfig(
    long webhookMaxRequestBytes, WebhookQuota webhookQuota, Optional<String> metricsKey) {
  /** The setting names this record reads, with what they mean. */
  public static final Map<String, String> SETTINGS =
      Map.of(
          "PADDOCK_WEBHOOK_MAX_REQUEST_BYTES", "largest webhook request body (default 1m)",
          "PADDOCK_WEBHOOK_MAX_EVENTS", "events kept per conversation (default 10000)",
          "PADDOCK_WEBHOOK_MAX_BYTES", "bytes of events kept per conversation (default 16m)",
          "PADDOCK_WEBHOOK_MAX_CONVERSATIONS", "conversations per sandbox (default 10)",
          "PADDOCK_METRICS_KEY", "bearer key /metrics requires (default: none, open)");

  /** 1 MiB per webhook request, {@link WebhookQuota#DEFAULT}, open metrics. */
  public static final ApiServerConfig DEFAULT =
      new ApiServerConfig(1 << 20, WebhookQuota.DEFAULT, Optional.empty());

  public ApiServerConfig {
    if (webhookMaxRequestBytes < 1) {
      throw new IllegalArgumentException(
          "webhookMaxRequestBytes must be at least 1, got " + webhookMaxRequestBytes);
    }
    Objects.requireNonNull(webhookQuota, "webhookQuota");
    Objects.requireNonNull(metricsKey, "metricsKey");
  }

  /**
   * Reads the settings named in {@link #SETTINGS}; absent ones keep their defaults.
   *
   * @throws IllegalArgumentException naming the setting whose value is invalid
   */
  public static ApiServerConfig fromSettings(Map<String, String> settings) {
    WebhookQuota quota = DEFAULT.webhookQuota();
    return new ApiServerConfig(
        size(settings, "PADDOCK_WEBHOOK_MAX_REQUEST_BYTES", DEFAULT.webhookMaxRequestBytes()),
        new WebhookQuota(
            count(settings, "PADDOCK_WEBHOOK_MAX_EVENTS", quota.maxEventsPerConversation()),
            size(settings, "PADDOCK_WEBHOOK_MAX_BYTES", quota.maxBytesPerConversation()),
            (int)
                count(
                    settings,
                    "PADDOCK_WEBHOOK_MAX_CONVERSATIONS",
                    quota.maxConversationsPerSandbox())),
        Optional.ofNullable(settings.get("PADDOCK_METRICS_KEY")).filter(k -> !k.isBlank()));
  }

  private static long size(Map<String, String> settings, String name, long fallback) {
    String value = settings.get(name);
    return value == null || value.isBlank()
        ? fallback
        : Setting.size(name, "a size").parse(value.strip());
  }

  private static long count(Map<String, String> settings, String name, long fallback) {
    String value = settings.get(name);
    if (value == null || value.isBlank()) {
      return fallback;
    }
    try {
      long n = Long.parseLong(value.trim());
      if (n >= 1 && n <= Integer.MAX_VALUE) {
        return n;
      }
    } catch (NumberFormatException e) {
      // Falls through to the message below, which says what is allowed.
    }
    throw new IllegalArgumentException(
        name + ": '" + value + "' is not allowed; write a whole number from 1 to 2147483647");
  }
}
