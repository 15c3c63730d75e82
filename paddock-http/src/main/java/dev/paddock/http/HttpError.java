package dev.paddock.http;

/**
 * A request failed in a way the client can act on. Thrown anywhere below a route handler and turned
 * into {@code {"detail": message}} with {@link #status()} by the {@link Router}.
 */
public final class HttpError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int status;

  public HttpError(int status, String detail) {
    super(detail, null, false, false);
    this.status = status;
  }

  public int status() {
    return status;
  }

  public static HttpError badRequest(String detail) {
    return new HttpError(400, detail);
  }

  public static HttpError unprocessable(String detail) {
    return new HttpError(422, detail);
  }

  public static HttpError notFound(String detail) {
    return new HttpError(404, detail);
  }

  public static HttpError conflict(String detail) {
    return new HttpError(409, detail);
  }
}
