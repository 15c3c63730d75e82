package dev.paddock.server;

import dev.paddock.api.CapacityExceededException;
import dev.paddock.api.InvalidRequestException;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxNotRunningException;
import dev.paddock.api.SandboxStartException;
import dev.paddock.http.HttpError;
import dev.paddock.http.Router;
import dev.paddock.store.ConflictException;
import dev.paddock.store.StoreException;

/**
 * Maps the model's exceptions to HTTP statuses with their (safe) messages. Request errors are
 * {@link InvalidRequestException}s (400 or 422); any other {@link IllegalArgumentException} is a
 * bug of ours: logged with a reference and answered 500 without its message, which may carry
 * internals (a path, a value of another user).
 */
final class Failures {
  // The platform logger, as paddock-http's: the server binds it to the one log (SLF4J).
  private static final System.Logger LOG = System.getLogger("paddock.server");

  private Failures() {}

  private static HttpError unexpected(IllegalArgumentException e) {
    String reference = Long.toHexString(System.nanoTime());
    LOG.log(System.Logger.Level.ERROR, "unexpected failure (reference " + reference + ")", e);
    return new HttpError(500, "internal error (reference: " + reference + ")");
  }

  static Router.Route mapped(Router.Route route) {
    return call -> {
      try {
        route.handle(call);
      } catch (CapacityExceededException e) {
        throw new HttpError(429, e.getMessage());
      } catch (SandboxStartException e) {
        throw new HttpError(e.unavailable() ? 503 : 500, e.getMessage());
      } catch (InvalidRequestException e) {
        throw e.malformed()
            ? HttpError.badRequest(e.getMessage())
            : HttpError.unprocessable(e.getMessage());
      } catch (IllegalArgumentException e) {
        throw unexpected(e);
      } catch (ConflictException e) {
        throw HttpError.conflict(e.getMessage());
      } catch (StoreException e) {
        throw new HttpError(503, "the store is unavailable right now; try again");
      } catch (SandboxNotRunningException e) {
        throw HttpError.conflict(e.getMessage());
      } catch (SandboxException e) {
        throw new HttpError(503, e.getMessage());
      }
    };
  }
}
