package dev.paddock.agent.git;

import dev.paddock.http.HttpError;

/**
 * Git could not be run to completion: it is missing, it timed out, or it printed more than we keep.
 * A non-zero exit is not a failure here; callers read {@link GitResult} and decide whether it is
 * the client's fault (400) or ours (500).
 */
final class GitFailure extends RuntimeException {
  private static final long serialVersionUID = 1L;

  GitFailure(String message) {
    super(message);
  }

  GitFailure(String message, Throwable cause) {
    super(message, cause);
  }

  /** The 500 reply for this failure, keeping the message. */
  HttpError asHttpError() {
    return new HttpError(500, getMessage());
  }
}
