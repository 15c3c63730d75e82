package dev.paddock.agent.search;

import dev.paddock.agent.files.Globs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The rules of one {@code .gitignore} file, with git's meaning: {@code #} comments, {@code !}
 * negation, a trailing {@code /} for directories only, a {@code /} at the start or inside anchoring
 * the pattern at the file's directory (else it matches a name at any depth), {@code **} spanning
 * directories, the last matching rule deciding. Immutable and thread-safe.
 */
final class IgnoreRules {
  /** The largest ignore file read; bigger ones are not honoured (they are not hand-written). */
  private static final long MAX_FILE_BYTES = 1 << 20;

  private record Rule(
      Pattern pattern, boolean negated, boolean directoriesOnly, boolean anchored) {}

  private final List<Rule> rules;

  private IgnoreRules(List<Rule> rules) {
    this.rules = rules;
  }

  /** The rules of {@code file} when it is a readable regular file. */
  static Optional<IgnoreRules> read(Path file) {
    try {
      if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
          || Files.size(file) > MAX_FILE_BYTES) {
        return Optional.empty();
      }
      return Optional.of(parse(Files.readAllLines(file, StandardCharsets.UTF_8)));
    } catch (IOException | java.io.UncheckedIOException e) {
      // Unreadable or not UTF-8: searched as if absent, as git would skip a broken line.
      return Optional.empty();
    }
  }

  static IgnoreRules parse(List<String> lines) {
    List<Rule> rules = new ArrayList<>();
    for (String line : lines) {
      rule(line).ifPresent(rules::add);
    }
    return new IgnoreRules(List.copyOf(rules));
  }

  private static Optional<Rule> rule(String line) {
    String body = trimTrailingSpaces(line);
    if (body.isEmpty() || body.startsWith("#")) {
      return Optional.empty();
    }
    boolean negated = body.startsWith("!");
    if (negated) {
      body = body.substring(1);
    } else if (body.startsWith("\\!") || body.startsWith("\\#")) {
      body = body.substring(1);
    }
    boolean directoriesOnly = body.endsWith("/");
    if (directoriesOnly) {
      body = body.substring(0, body.length() - 1);
    }
    boolean anchored = body.contains("/");
    if (body.startsWith("/")) {
      body = body.substring(1);
    }
    if (body.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new Rule(Globs.compile(body, false), negated, directoriesOnly, anchored));
  }

  private static String trimTrailingSpaces(String line) {
    int end = line.length();
    while (end > 0 && line.charAt(end - 1) == ' ' && (end < 2 || line.charAt(end - 2) != '\\')) {
      end--;
    }
    return line.substring(0, end);
  }

  /**
   * The decision for the entry at {@code relative} (to this file's directory): ignored, kept (a
   * negation matched last), or empty when no rule matches.
   */
  Optional<Boolean> decide(String relative, boolean directory) {
    String name = relative.substring(relative.lastIndexOf('/') + 1);
    for (int i = rules.size() - 1; i >= 0; i--) {
      Rule rule = rules.get(i);
      if (rule.directoriesOnly() && !directory) {
        continue;
      }
      if (rule.pattern().matcher(rule.anchored() ? relative : name).matches()) {
        return Optional.of(!rule.negated());
      }
    }
    return Optional.empty();
  }
}
