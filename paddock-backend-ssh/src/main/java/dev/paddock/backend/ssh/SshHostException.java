package dev.paddock.backend.ssh;

import dev.paddock.api.spi.RuntimeStartException;

/** A host could not be used: unreachable, refusing our key, presenting another host key... */
final class SshHostException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final SshFailure failure;
  private final transient SshTarget target;
  private final String detail;

  SshHostException(SshFailure failure, SshTarget target, String detail, Throwable cause) {
    super(failure.tag() + ": " + target + ": " + detail, cause);
    this.failure = failure;
    this.target = target;
    this.detail = detail;
  }

  SshFailure failure() {
    return failure;
  }

  /** As a classified start failure. */
  RuntimeStartException asStartFailure() {
    RuntimeStartException e = failure.exception(target, detail);
    e.initCause(this);
    return e;
  }
}
