package dev.paddock.backend.docker;

import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.backend.kit.StartDiagnosis;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Failure classes read from what the engine or the container said, before the generic ones: an
 * image of another architecture ({@code exec format error}: the kernel cannot run its binaries) and
 * a full disk ({@code no space left on device}, ENOSPC, from the engine or the agent).
 */
final class FailureText {
  private FailureText() {}

  static Optional<Kind> classify(String text) {
    String lower = text.toLowerCase(Locale.ROOT);
    if (lower.contains("exec format error")) {
      return Optional.of(Kind.IMAGE_WRONG_ARCHITECTURE);
    }
    if (StartDiagnosis.saysDiskFull(text)) {
      return Optional.of(Kind.DISK_FULL);
    }
    return Optional.empty();
  }

  static Optional<Kind> classify(List<String> lines) {
    return classify(String.join("\n", lines));
  }
}
