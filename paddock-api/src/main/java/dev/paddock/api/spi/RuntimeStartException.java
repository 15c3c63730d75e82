package dev.paddock.api.spi;

/** A backend could not start a runtime; it has already cleaned up whatever it half-made. */
public final class RuntimeStartException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient RuntimeFailure failure;

  public RuntimeStartException(RuntimeFailure failure) {
    super(failure.kind() + ": " + failure.rawDetail());
    this.failure = failure;
  }

  public RuntimeStartException(RuntimeFailure failure, Throwable cause) {
    super(failure.kind() + ": " + failure.rawDetail(), cause);
    this.failure = failure;
  }

  public RuntimeFailure failure() {
    return failure;
  }
}
