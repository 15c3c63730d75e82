package dev.paddock.store;

/**
 * A write lost a race: the row changed since it was read (optimistic lock), or a unique value
 * (sandbox id, user name) is taken. The caller re-reads and decides.
 */
public final class ConflictException extends StoreException {
  private static final long serialVersionUID = 1L;

  public ConflictException(String message) {
    super(message);
  }

  public ConflictException(String message, Throwable cause) {
    super(message, cause);
  }
}
