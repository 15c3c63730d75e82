package dev.paddock.hardening;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** STYLE.md: tests assert with AssertJ only, so every failure reads the same way. */
class OneAssertionLibraryTest {
  private static final Pattern OTHER_ASSERTIONS =
      Pattern.compile(
          "import\\s+(static\\s+)?(org\\.junit\\.jupiter\\.api\\.Assertions|org\\.junit\\.Assert"
              + "|junit\\.framework|org\\.hamcrest|com\\.google\\.common\\.truth)\\b"
              + "|org\\.junit\\.jupiter\\.api\\.Assertions\\.");

  @Test
  void noTestUsesAnotherAssertionLibrary() {
    // This module is left out: its own test spells the forbidden imports out to check the pattern.
    List<Path> tests =
        SourceTree.javaSources("test").stream()
            .filter(f -> !f.startsWith(SourceTree.root().resolve("paddock-hardening")))
            .toList();
    assertThat(tests).hasSizeGreaterThan(100);

    List<String> offenders =
        tests.stream()
            .filter(f -> OTHER_ASSERTIONS.matcher(SourceTree.read(f)).find())
            .map(f -> SourceTree.root().relativize(f).toString())
            .toList();

    assertThat(offenders).isEmpty();
  }

  @Test
  void thePatternCatchesEachForm() {
    // The rule above must not pass because its pattern matches nothing.
    assertThat(
            OTHER_ASSERTIONS.matcher("import static org.junit.jupiter.api.Assertions.fail;").find())
        .isTrue();
    assertThat(
            OTHER_ASSERTIONS.matcher("x = org.junit.jupiter.api.Assertions.assertThrows(").find())
        .isTrue();
    assertThat(OTHER_ASSERTIONS.matcher("import org.hamcrest.Matchers;").find()).isTrue();
    assertThat(OTHER_ASSERTIONS.matcher("import org.junit.jupiter.api.Assumptions;").find())
        .isFalse();
  }
}
