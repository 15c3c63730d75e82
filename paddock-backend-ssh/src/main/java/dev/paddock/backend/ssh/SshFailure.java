package dev.paddock.backend.ssh;

import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeStartException;
import java.util.Locale;

/**
 * Why an SSH host could not take a sandbox: this backend's own {@link RuntimeFailure.Kind}s ({@code
 * SSH_AUTH_REFUSED}, ...), each with the safe message users see. The raw detail (host names, paths,
 * the client's stderr) only goes to the log.
 */
enum SshFailure {
  AUTH_REFUSED("The sandbox host refused the control plane's SSH key."),
  HOST_KEY_MISMATCH("The sandbox host's SSH key is not the one on record, so it was not used."),
  HOST_UNREACHABLE("The sandbox host cannot be reached right now."),
  HOST_UNSUITABLE("The sandbox host cannot run the agent (it needs bash, glibc and setsid)."),
  DISK_FULL("The sandbox host is out of disk space.");

  private final RuntimeFailure.Kind kind;

  SshFailure(String safeMessage) {
    this.kind = RuntimeFailure.Kind.of("SSH_" + name(), safeMessage);
  }

  /** A failure of the connection itself: another host may still take the sandbox. */
  boolean isConnection() {
    return this == AUTH_REFUSED || this == HOST_KEY_MISMATCH || this == HOST_UNREACHABLE;
  }

  String safeMessage() {
    return kind.safeMessage();
  }

  /** {@code ssh-auth-refused}, ...: how the exception message starts, for the log. */
  String tag() {
    return "ssh-" + name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  RuntimeFailure.Kind kind() {
    return kind;
  }

  RuntimeStartException exception(SshTarget host, String detail) {
    return RuntimeStartException.of(kind, host + ": " + detail);
  }
}
