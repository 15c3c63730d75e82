package dev.paddock.agent.git;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.http.HttpError;
import java.util.List;
import org.junit.jupiter.api.Test;

class ExcludePathspecsTest {
  @Test
  void directoryOnlyFloatingAndAnchoredPatterns() {
    assertThat(ExcludePathspecs.of(List.of("node_modules/", "*.pyc", "docs/tmp", "/top")))
        .containsExactly(
            ":(exclude,glob)**/node_modules/**",
            ":(exclude,glob)**/*.pyc",
            ":(exclude,glob)**/*.pyc/**",
            ":(exclude,glob)docs/tmp",
            ":(exclude,glob)docs/tmp/**",
            ":(exclude,glob)top",
            ":(exclude,glob)top/**");
  }

  @Test
  void skipsBlanksAndCommentsAndRefusesNegationAndParents() {
    assertThat(ExcludePathspecs.of(List.of(" ", "# note"))).isEmpty();
    assertThatThrownBy(() -> ExcludePathspecs.of(List.of("!keep")))
        .isInstanceOf(HttpError.class)
        .hasMessageContaining("negated");
    assertThatThrownBy(() -> ExcludePathspecs.of(List.of("../outside")))
        .isInstanceOf(HttpError.class)
        .hasMessageContaining("..");
    assertThatThrownBy(() -> ExcludePathspecs.of(List.of("/"))).isInstanceOf(HttpError.class);
  }
}
