package dev.paddock.api;

import java.util.Optional;

/** Starting or resuming would pass a capacity limit (HTTP 429); the message names the limit. */
public final class CapacityExceededException extends SandboxException {
  private static final long serialVersionUID = 1L;

  public CapacityExceededException(String message) {
    super(message, Optional.empty());
  }
}
