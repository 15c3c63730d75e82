package dev.paddock.agent.files;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ExcludeRulesTest {
  private static boolean excluded(String pattern, String path, boolean directory) {
    return ExcludeRules.of(List.of(pattern)).excludes(path, directory);
  }

  @Test
  void trailingSlashMatchesDirectoriesOnly() {
    assertThat(excluded("build/", "build", true)).isTrue();
    assertThat(excluded("build/", "a/b/build", true)).isTrue();
    assertThat(excluded("build/", "build", false)).isFalse();
  }

  @Test
  void anInnerSlashAnchorsAtTheRoot() {
    assertThat(excluded("src/gen", "src/gen", true)).isTrue();
    assertThat(excluded("src/gen", "x/src/gen", true)).isFalse();
    assertThat(excluded("/top", "top", false)).isTrue();
    assertThat(excluded("/top", "a/top", false)).isFalse();
    assertThat(excluded("src/*.java", "src/A.java", false)).isTrue();
    assertThat(excluded("src/*.java", "src/sub/A.java", false)).isFalse();
  }

  @Test
  void otherPatternsMatchTheNameAtAnyDepth() {
    assertThat(excluded("*.pyc", "a/b/c.pyc", false)).isTrue();
    assertThat(excluded("*.pyc", "a/b/c.py", false)).isFalse();
    assertThat(excluded("?.txt", "d/x.txt", false)).isTrue();
    assertThat(excluded("?.txt", "d/xy.txt", false)).isFalse();
    assertThat(excluded("[ab].txt", "b.txt", false)).isTrue();
    assertThat(excluded("[!ab].txt", "b.txt", false)).isFalse();
    assertThat(excluded("[!ab].txt", "c.txt", false)).isTrue();
  }

  @Test
  void doubleStarCrossesDirectories() {
    assertThat(excluded("**/gen", "gen", true)).isTrue();
    assertThat(excluded("**/gen", "a/b/gen", true)).isTrue();
    assertThat(excluded("a/**/z", "a/z", false)).isTrue();
    assertThat(excluded("a/**/z", "a/b/c/z", false)).isTrue();
    assertThat(excluded("logs/**", "logs/x/y", false)).isTrue();
  }

  @Test
  void specialCharactersAreLiteral() {
    assertThat(excluded("a+b(1).txt", "a+b(1).txt", false)).isTrue();
    assertThat(excluded("[oops", "[oops", false)).isTrue();
    assertThat(excluded("\\*", "*", false)).isTrue();
    assertThat(excluded("\\*", "x", false)).isFalse();
    assertThat(ExcludeRules.of(List.of(" ", "", "/")).excludes("x", true)).isFalse();
  }
}
