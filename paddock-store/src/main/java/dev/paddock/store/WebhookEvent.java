package dev.paddock.store;

import java.time.Instant;
import java.util.Objects;

/**
 * One event a sandbox posted back (OpenHands' webhooks).
 *
 * @param sequence store-assigned, increasing
 * @param sandboxId the sandbox whose key authenticated the post
 * @param conversationId the conversation it belongs to
 * @param json the event exactly as received (one element of the posted array)
 * @param receivedAt when it was stored
 */
public record WebhookEvent(
    long sequence, String sandboxId, String conversationId, String json, Instant receivedAt) {
  public WebhookEvent {
    Objects.requireNonNull(sandboxId, "sandboxId");
    Objects.requireNonNull(conversationId, "conversationId");
    Objects.requireNonNull(json, "json");
    Objects.requireNonNull(receivedAt, "receivedAt");
  }
}
