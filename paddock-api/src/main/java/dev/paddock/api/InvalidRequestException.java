package dev.paddock.api;

/**
 * A well-formed request whose values cannot be honoured: a field out of range, over an operator's
 * maximum, a label or variable name outside its grammar (HTTP 422). The message names the field and
 * what is allowed. Requests naming something that does not exist or is not allowed (an unknown
 * spec, an image outside the allowed patterns) are plain {@link IllegalArgumentException}s (400).
 */
public class InvalidRequestException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public InvalidRequestException(String message) {
    super(message);
  }
}
