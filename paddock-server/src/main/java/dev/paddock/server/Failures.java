package dev.paddock.server;

import dev.paddock.api.CapacityExceededException;
import dev.paddock.api.InvalidRequestException;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxStartException;
import dev.paddock.http.HttpError;
import dev.paddock.http.Router;
import dev.paddock.store.ConflictException;
import dev.paddock.store.StoreException;

/** Maps the model's exceptions to HTTP statuses with their (safe) messages. */
final class Failures {
  private Failures() {}

  static Router.Route mapped(Router.Route route) {
    return call -> {
      try {
        route.handle(call);
      } catch (CapacityExceededException e) {
        throw new HttpError(429, e.getMessage());
      } catch (SandboxStartException e) {
        throw new HttpError(500, e.getMessage());
      } catch (InvalidRequestException e) {
        throw HttpError.unprocessable(e.getMessage());
      } catch (IllegalArgumentException e) {
        throw HttpError.badRequest(e.getMessage());
      } catch (ConflictException e) {
        throw HttpError.conflict(e.getMessage());
      } catch (StoreException e) {
        throw new HttpError(503, "the store is unavailable right now; try again");
      } catch (SandboxException e) {
        throw new HttpError(503, e.getMessage());
      }
    };
  }
}
