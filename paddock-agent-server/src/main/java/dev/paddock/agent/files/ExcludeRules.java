package dev.paddock.agent.files;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Archive exclude patterns with gitignore-like meaning: a trailing {@code /} matches directories
 * only; a pattern with a {@code /} elsewhere (or a leading one) is anchored at the archive root and
 * matched against the whole relative path; any other pattern is matched against the last name at
 * any depth. Globs: {@code *} and {@code ?} stay within one name, {@code **} crosses names ({@code
 * a/**}{@code /b} also matches {@code a/b}), {@code [...]} is a character class ({@code [!...]}
 * negated), {@code \} escapes the next character. An excluded directory is pruned with everything
 * below it. Negation ({@code !pattern}) is not supported: such a pattern matches a name starting
 * with {@code !}. Immutable and thread-safe.
 */
final class ExcludeRules {
  private record Rule(Pattern glob, boolean directoriesOnly, boolean anchored) {}

  private final List<String> patterns;
  private final List<Rule> rules;

  private ExcludeRules(List<String> patterns, List<Rule> rules) {
    this.patterns = patterns;
    this.rules = rules;
  }

  /** Compiles {@code patterns}; blank ones are dropped. */
  static ExcludeRules of(List<String> patterns) {
    List<String> kept = new ArrayList<>();
    List<Rule> rules = new ArrayList<>();
    for (String pattern : patterns) {
      String trimmed = pattern.strip();
      if (!trimmed.isEmpty()) {
        kept.add(trimmed);
        rule(trimmed).ifPresent(rules::add);
      }
    }
    return new ExcludeRules(List.copyOf(kept), List.copyOf(rules));
  }

  /** The patterns in force, as given (trimmed). */
  List<String> patterns() {
    return patterns;
  }

  /**
   * Whether the entry at {@code relativePath} ({@code /}-separated, relative to the archive root,
   * never empty) is excluded.
   */
  boolean excludes(String relativePath, boolean directory) {
    String name = relativePath.substring(relativePath.lastIndexOf('/') + 1);
    for (Rule rule : rules) {
      if (rule.directoriesOnly() && !directory) {
        continue;
      }
      if (rule.glob().matcher(rule.anchored() ? relativePath : name).matches()) {
        return true;
      }
    }
    return false;
  }

  private static Optional<Rule> rule(String pattern) {
    boolean directoriesOnly = pattern.endsWith("/");
    String body = directoriesOnly ? pattern.substring(0, pattern.length() - 1) : pattern;
    boolean anchored = body.contains("/");
    if (body.startsWith("/")) {
      body = body.substring(1);
    }
    if (body.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new Rule(Globs.compile(body, false), directoriesOnly, anchored));
  }
}
