package dev.paddock.backend.ssh;

import java.util.List;
import java.util.Optional;

/** Reads the OpenSSH client's own error text (exit code 255) into an {@link SshFailure}. */
final class ClientErrors {
  private static final List<String> HOST_KEY =
      List.of(
          "host key verification failed",
          "remote host identification has changed",
          "host key is known for",
          "host key for",
          "no matching host key type");
  private static final List<String> AUTH =
      List.of("permission denied", "too many authentication failures", "load key");
  private static final List<String> UNREACHABLE =
      List.of(
          "connection refused",
          "connection timed out",
          "operation timed out",
          "no route to host",
          "network is unreachable",
          "could not resolve hostname",
          "name or service not known",
          "connection closed by",
          "connection reset",
          "broken pipe",
          "kex_exchange_identification");

  private ClientErrors() {}

  /** The class of a client failure; empty when the text is not one we know. */
  static Optional<SshFailure> classify(String stderr) {
    String text = stderr.toLowerCase(java.util.Locale.ROOT);
    if (HOST_KEY.stream().anyMatch(text::contains)) {
      return Optional.of(SshFailure.HOST_KEY_MISMATCH);
    }
    if (AUTH.stream().anyMatch(text::contains)) {
      return Optional.of(SshFailure.AUTH_REFUSED);
    }
    if (UNREACHABLE.stream().anyMatch(text::contains)) {
      return Optional.of(SshFailure.HOST_UNREACHABLE);
    }
    return Optional.empty();
  }
}
