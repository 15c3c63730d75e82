package dev.paddock.store;

/** The store failed (connection lost, constraint broken unexpectedly); the message says which. */
public class StoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StoreException(String message, Throwable cause) {
    super(message, cause);
  }

  public StoreException(String message) {
    super(message);
  }
}
