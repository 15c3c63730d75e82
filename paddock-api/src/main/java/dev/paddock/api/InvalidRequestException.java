package dev.paddock.api;

/**
 * A request the caller must change: either well-formed but with values that cannot be honoured (a
 * field out of range, over an operator's maximum, a label or variable name outside its grammar;
 * HTTP 422, {@link #InvalidRequestException(String)}), or naming something that does not exist, is
 * not allowed or is malformed (an unknown spec, an image outside the allowed patterns, a taken or
 * malformed id, a page id this server did not issue; HTTP 400, {@link #badRequest}). The message
 * names the field and what is allowed. Any other {@link IllegalArgumentException} reaching the REST
 * API is a bug of ours, answered with a 500.
 */
public class InvalidRequestException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final boolean malformed;

  /** A value that cannot be honoured (422). */
  public InvalidRequestException(String message) {
    this(message, false);
  }

  private InvalidRequestException(String message, boolean malformed) {
    super(message);
    this.malformed = malformed;
  }

  /** A request naming something unknown, not allowed or malformed (400). */
  public static InvalidRequestException badRequest(String message) {
    return new InvalidRequestException(message, true);
  }

  /** True for {@link #badRequest} (400), false for a value that cannot be honoured (422). */
  public boolean malformed() {
    return malformed;
  }
}
