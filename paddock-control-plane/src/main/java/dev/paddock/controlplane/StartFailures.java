package dev.paddock.controlplane;

import dev.paddock.api.spi.RuntimeFailure;
import java.util.Optional;

/**
 * The safe texts users see when a sandbox fails: a short message per failure class plus {@code
 * (reference: <sandbox id>)}, under which the raw detail is in the log.
 */
final class StartFailures {
  static final String INTERRUPTED =
      "The sandbox's start was interrupted by a control-plane restart. Delete it and start again.";
  static final String ABANDONED =
      "The sandbox's start was cut short: the control-plane replica starting it stopped. Delete it"
          + " and start again.";
  static final String GONE = "The sandbox's runtime is gone. Delete it and start a new one.";
  static final String DELETE_FAILED =
      "Deleting the sandbox failed; its session key stays revoked. Delete it again.";

  /** Stored while a delete tears the runtime down: one cut short is finished by reconcile. */
  static final String DELETING =
      "The sandbox is being deleted; a control-plane restart finishes an interrupted delete.";

  static final String KEY_NOT_TAKEN =
      "The sandbox's agent did not accept its new session key. Delete it and start again.";

  private StartFailures() {}

  static String detail(RuntimeFailure failure, String sandboxId) {
    return detail(failure.safeMessage(), sandboxId);
  }

  static String detail(String safeMessage, String sandboxId) {
    return safeMessage + reference(sandboxId);
  }

  /** The safe message of a stored detail, without its reference suffix. */
  static String safeMessage(Optional<String> detail, String sandboxId) {
    String text = detail.orElse(RuntimeFailure.Kind.UNKNOWN.safeMessage());
    String suffix = reference(sandboxId);
    return text.endsWith(suffix) ? text.substring(0, text.length() - suffix.length()) : text;
  }

  /** Whether a stored detail says the runtime could not be reached (the engine was down). */
  static boolean unreachable(Optional<String> detail, String sandboxId) {
    return safeMessage(detail, sandboxId)
        .equals(RuntimeFailure.Kind.ENGINE_UNREACHABLE.safeMessage());
  }

  /** Whether the record's stored detail says a delete of it began. */
  static boolean deleting(Optional<String> detail, String sandboxId) {
    return detail.equals(Optional.of(detail(DELETING, sandboxId)));
  }

  private static String reference(String sandboxId) {
    return " (reference: " + sandboxId + ")";
  }
}
