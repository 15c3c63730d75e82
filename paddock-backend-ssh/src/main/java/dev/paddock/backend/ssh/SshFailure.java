package dev.paddock.backend.ssh;

import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeStartException;
import java.util.Locale;

/**
 * Why an SSH host could not take a sandbox, each with the safe message users see. The raw detail
 * (host names, paths, the client's stderr) only goes to the log.
 *
 * <p>Until the SPI's failure classification is open, each kind is carried by the nearest {@link
 * RuntimeFailure.Kind} with {@link #tag()} leading the raw detail, so the log and the tests see the
 * precise class.
 */
enum SshFailure {
  AUTH_REFUSED(
      "The sandbox host refused the control plane's SSH key.",
      RuntimeFailure.Kind.ENGINE_UNREACHABLE),
  HOST_KEY_MISMATCH(
      "The sandbox host's SSH key does not match the one on record; it was not contacted further.",
      RuntimeFailure.Kind.ENGINE_UNREACHABLE),
  HOST_UNREACHABLE(
      "The sandbox host cannot be reached right now.", RuntimeFailure.Kind.ENGINE_UNREACHABLE),
  HOST_UNSUITABLE(
      "The sandbox host cannot run the agent (it needs bash, glibc and setsid).",
      RuntimeFailure.Kind.IMAGE_UNSUITABLE),
  DISK_FULL("The sandbox host is out of disk space.", RuntimeFailure.Kind.CAPACITY);

  private final String safeMessage;
  private final RuntimeFailure.Kind kind;

  SshFailure(String safeMessage, RuntimeFailure.Kind kind) {
    this.safeMessage = safeMessage;
    this.kind = kind;
  }

  /** A failure of the connection itself: another host may still take the sandbox. */
  boolean isConnection() {
    return this == AUTH_REFUSED || this == HOST_KEY_MISMATCH || this == HOST_UNREACHABLE;
  }

  String safeMessage() {
    return safeMessage;
  }

  /** {@code ssh-auth-refused}, ...: how the raw detail starts. */
  String tag() {
    return "ssh-" + name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  RuntimeFailure.Kind kind() {
    return kind;
  }

  RuntimeStartException exception(SshTarget host, String detail) {
    return RuntimeStartException.of(kind, tag() + ": " + host + ": " + detail, null);
  }
}
