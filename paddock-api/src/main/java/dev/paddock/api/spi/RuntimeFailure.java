package dev.paddock.api.spi;

import java.util.Objects;

/**
 * A classified runtime failure: the class decides the safe message users see, the raw detail only
 * ever goes to the control plane's log.
 *
 * @param kind the class of failure
 * @param rawDetail what the runtime said (may name hosts, paths, secrets): log only
 */
public record RuntimeFailure(Kind kind, String rawDetail) {
  public RuntimeFailure {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(rawDetail, "rawDetail");
  }

  /** Failure classes, each with the safe message shown to users. */
  public enum Kind {
    BINARY_MISSING("The sandbox runtime could not be found on the host."),
    PORT_TAKEN("The sandbox could not get a network port."),
    EXITED("The sandbox's agent exited while starting."),
    NEVER_READY("The sandbox's agent did not become ready in time."),
    OUT_OF_MEMORY("The sandbox ran out of memory while starting."),
    IMAGE_MISSING("The sandbox image is not available."),
    IMAGE_UNSUITABLE("The sandbox image cannot run the agent (it needs glibc and a shell)."),
    IMAGE_WRONG_ARCHITECTURE(
        "The sandbox image is built for another CPU architecture than this host's."),
    DISK_FULL("The host has no disk space left for the sandbox."),
    ENGINE_UNREACHABLE("The container engine cannot be reached right now."),
    CALLBACK_UNREACHABLE("The sandbox cannot reach the control plane's callback URL."),
    CAPACITY("The system is at capacity right now. Please try again in a few minutes."),
    UNKNOWN("The sandbox failed to start for an unexpected reason. Please try again.");

    private final String safeMessage;

    Kind(String safeMessage) {
      this.safeMessage = safeMessage;
    }

    public String safeMessage() {
      return safeMessage;
    }
  }
}
