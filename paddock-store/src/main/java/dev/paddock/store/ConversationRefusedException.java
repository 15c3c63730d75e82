package dev.paddock.store;

/**
 * A sandbox may not write to this conversation: another sandbox (or the same id under another
 * owner) claimed it first, or the sandbox already owns as many conversations as its quota allows.
 * Nothing was written.
 */
public final class ConversationRefusedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why the write was refused. */
  public enum Reason {
    /** The conversation id belongs to another sandbox or owner. */
    NOT_THIS_SANDBOX,
    /** The sandbox owns {@link WebhookQuota#maxConversationsPerSandbox()} conversations already. */
    TOO_MANY_CONVERSATIONS
  }

  private final Reason reason;

  public ConversationRefusedException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
