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

  /** A classified failure with the raw detail (log only) and no cause. */
  public static RuntimeStartException of(RuntimeFailure.Kind kind, String detail) {
    return new RuntimeStartException(new RuntimeFailure(kind, detail));
  }

  /** A classified failure with the raw detail (log only) and the cause, if any. */
  public static RuntimeStartException of(RuntimeFailure.Kind kind, String detail, Throwable cause) {
    RuntimeFailure failure = new RuntimeFailure(kind, detail);
    return cause == null
        ? new RuntimeStartException(failure)
        : new RuntimeStartException(failure, cause);
  }

  public RuntimeFailure failure() {
    return failure;
  }
}
