package dev.paddock.client;

/** A call failed: the server's status and its {@code detail} message, or the I/O problem. */
public final class PaddockClientException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int status;

  public PaddockClientException(int status, String message) {
    super(message);
    this.status = status;
  }

  public PaddockClientException(String message, Throwable cause) {
    super(message, cause);
    this.status = 0;
  }

  /** The HTTP status, or 0 when the server could not be reached. */
  public int status() {
    return status;
  }
}
