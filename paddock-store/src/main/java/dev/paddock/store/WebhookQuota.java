package dev.paddock.store;

/**
 * How much a sandbox may keep in the store through webhooks. Events beyond a conversation's limits
 * push out its oldest events (retention, like the agent's own event log); a conversation beyond the
 * sandbox's limit is refused.
 *
 * @param maxEventsPerConversation events kept per conversation, at least 1
 * @param maxBytesPerConversation UTF-8 bytes of events kept per conversation, at least 1
 * @param maxConversationsPerSandbox conversations one sandbox may own, at least 1
 */
public record WebhookQuota(
    long maxEventsPerConversation, long maxBytesPerConversation, int maxConversationsPerSandbox) {
  /** 10,000 events and 16 MiB per conversation, 10 conversations per sandbox. */
  public static final WebhookQuota DEFAULT = new WebhookQuota(10_000, 16L << 20, 10);

  public WebhookQuota {
    positive("maxEventsPerConversation", maxEventsPerConversation);
    positive("maxBytesPerConversation", maxBytesPerConversation);
    positive("maxConversationsPerSandbox", maxConversationsPerSandbox);
  }

  private static void positive(String name, long value) {
    if (value < 1) {
      throw new IllegalArgumentException(name + " must be at least 1, got " + value);
    }
  }
}
