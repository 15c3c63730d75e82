package dev.paddock.agent.git;

import dev.paddock.http.HttpError;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns gitignore-like exclude patterns into git {@code :(exclude,glob)} pathspecs, relative to the
 * directory being archived:
 *
 * <ul>
 *   <li>a trailing {@code /} matches directories only: {@code build/} becomes {@code **}{@code
 *       /build/**}, so a file named {@code build} is kept;
 *   <li>a pattern with a {@code /} before its end (or a leading one) is anchored at the archive
 *       root: {@code docs/tmp} excludes {@code docs/tmp} and everything under it;
 *   <li>any other pattern matches at any depth: {@code *.pyc}, {@code secrets.env}.
 * </ul>
 *
 * Negation ({@code !}) and {@code ..} segments are refused with 400: they cannot be expressed
 * safely as excludes.
 */
final class ExcludePathspecs {
  private static final String MAGIC = ":(exclude,glob)";

  private ExcludePathspecs() {}

  static List<String> of(List<String> patterns) {
    List<String> pathspecs = new ArrayList<>();
    for (String raw : patterns) {
      String pattern = raw.strip();
      if (pattern.isEmpty() || pattern.startsWith("#")) {
        continue;
      }
      check(pattern);
      pathspecs.addAll(convert(pattern));
    }
    return pathspecs;
  }

  private static List<String> convert(String pattern) {
    boolean dirOnly = pattern.endsWith("/");
    String body = trim(pattern);
    if (body.isEmpty()) {
      throw HttpError.badRequest("exclude pattern '" + pattern + "' names no path");
    }
    boolean anchored = pattern.startsWith("/") || body.contains("/");
    String glob = (anchored ? "" : "**/") + body;
    return dirOnly ? List.of(MAGIC + glob + "/**") : List.of(MAGIC + glob, MAGIC + glob + "/**");
  }

  private static String trim(String pattern) {
    int start = 0;
    int end = pattern.length();
    while (start < end && pattern.charAt(start) == '/') {
      start++;
    }
    while (end > start && pattern.charAt(end - 1) == '/') {
      end--;
    }
    return pattern.substring(start, end);
  }

  private static void check(String pattern) {
    if (pattern.startsWith("!")) {
      throw HttpError.badRequest("negated exclude patterns are not supported: '" + pattern + "'");
    }
    if (pattern.chars().anyMatch(c -> c < ' ' || c == 0x7f)) {
      throw HttpError.badRequest("exclude patterns must not contain control characters");
    }
    for (String segment : pattern.split("/")) {
      if (segment.equals("..")) {
        throw HttpError.badRequest("exclude patterns must not contain '..': '" + pattern + "'");
      }
    }
  }
}
