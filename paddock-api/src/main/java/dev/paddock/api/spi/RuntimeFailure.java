package dev.paddock.api.spi;

import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A classified runtime failure: a {@link Kind}, the safe message users see, and the raw detail that
 * only ever goes to the control plane's log.
 *
 * @param kind the class of failure (an id for metrics and logs)
 * @param safeMessage what users see; never names hosts, paths or secrets (usually {@link
 *     Kind#safeMessage()}, or a more specific text the backend built from safe facts only, e.g. an
 *     exit code)
 * @param rawDetail what the runtime said (may name hosts, paths, secrets): log only
 */
public record RuntimeFailure(Kind kind, String safeMessage, String rawDetail) {
  public RuntimeFailure {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(safeMessage, "safeMessage");
    Objects.requireNonNull(rawDetail, "rawDetail");
  }

  /** A failure showing its kind's safe message. */
  public RuntimeFailure(Kind kind, String rawDetail) {
    this(kind, kind.safeMessage(), rawDetail);
  }

  /**
   * A class of failure: an id (for metrics, logs and tests) and the default safe message shown to
   * users. Open: a backend declares its own kinds (e.g. {@code Kind.of("kubernetes.unschedulable",
   * "No node can run the sandbox right now.")}) without editing this module; the shared ones are
   * the constants below. Two kinds are equal when their ids are.
   *
   * @param id letters, digits, {@code _ . -}; upper-case for the shared kinds, {@code
   *     <backend>.<name>} by convention for a backend's own
   * @param safeMessage one sentence a user may see
   */
  public record Kind(String id, String safeMessage) {
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");

    public static final Kind BINARY_MISSING =
        new Kind("BINARY_MISSING", "The sandbox runtime could not be found on the host.");
    public static final Kind PORT_TAKEN =
        new Kind("PORT_TAKEN", "The sandbox could not get a network port.");
    public static final Kind EXITED =
        new Kind("EXITED", "The sandbox's agent exited while starting.");

    /** A runtime that had been running stopped (killed, crashed); its workspace may be kept. */
    public static final Kind STOPPED =
        new Kind("STOPPED", "The sandbox's agent stopped while it was running.");

    public static final Kind NEVER_READY =
        new Kind("NEVER_READY", "The sandbox's agent did not become ready in time.");
    public static final Kind OUT_OF_MEMORY =
        new Kind("OUT_OF_MEMORY", "The sandbox ran out of memory while starting.");
    public static final Kind IMAGE_MISSING =
        new Kind("IMAGE_MISSING", "The sandbox image is not available.");
    public static final Kind IMAGE_UNSUITABLE =
        new Kind(
            "IMAGE_UNSUITABLE",
            "The sandbox image cannot run the agent (it needs glibc and a shell).");
    public static final Kind IMAGE_WRONG_ARCHITECTURE =
        new Kind(
            "IMAGE_WRONG_ARCHITECTURE",
            "The sandbox image is built for another CPU architecture than this host's.");
    public static final Kind DISK_FULL =
        new Kind("DISK_FULL", "The host has no disk space left for the sandbox.");
    public static final Kind ENGINE_UNREACHABLE =
        new Kind("ENGINE_UNREACHABLE", "The container engine cannot be reached right now.");
    public static final Kind CALLBACK_UNREACHABLE =
        new Kind(
            "CALLBACK_UNREACHABLE", "The sandbox cannot reach the control plane's callback URL.");
    public static final Kind CAPACITY =
        new Kind(
            "CAPACITY", "The system is at capacity right now. Please try again in a few minutes.");
    public static final Kind UNKNOWN =
        new Kind(
            "UNKNOWN", "The sandbox failed to start for an unexpected reason. Please try again.");

    private static final List<Kind> SHARED =
        List.of(
            BINARY_MISSING,
            PORT_TAKEN,
            EXITED,
            STOPPED,
            NEVER_READY,
            OUT_OF_MEMORY,
            IMAGE_MISSING,
            IMAGE_UNSUITABLE,
            IMAGE_WRONG_ARCHITECTURE,
            DISK_FULL,
            ENGINE_UNREACHABLE,
            CALLBACK_UNREACHABLE,
            CAPACITY,
            UNKNOWN);

    /**
     * @throws IllegalArgumentException for a malformed id or a blank message
     */
    public Kind {
      Objects.requireNonNull(id, "id");
      Objects.requireNonNull(safeMessage, "safeMessage");
      if (!ID.matcher(id).matches()) {
        throw new IllegalArgumentException("malformed failure kind id '" + id + "'");
      }
      if (safeMessage.isBlank()) {
        throw new IllegalArgumentException("failure kind " + id + " needs a safe message");
      }
    }

    /** A backend's own kind. */
    public static Kind of(String id, String safeMessage) {
      return new Kind(id, safeMessage);
    }

    /** The kinds every backend may use, in declaration order. */
    public static List<Kind> shared() {
      return SHARED;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Kind kind && kind.id.equals(id);
    }

    @Override
    public int hashCode() {
      return id.hashCode();
    }

    /** The id. */
    @Override
    public String toString() {
      return id;
    }
  }
}
