package dev.paddock.agent.files;

import java.util.regex.Pattern;

/**
 * Glob patterns as regular expressions over {@code /}-separated relative paths: {@code *} and
 * {@code ?} stay within one name, {@code **} spans names ({@code a/**}{@code /b} also matches
 * {@code a/b}, a leading {@code **}{@code /} also matches at the top), {@code [...]} is a class
 * ({@code [!...]} negated), {@code \} escapes, and (for search patterns, not .gitignore) {@code
 * {a,b}} alternatives. One translation for search patterns, .gitignore files and archive excludes.
 */
public final class Globs {
  private Globs() {}

  /** {@code glob} compiled; {@code braces}: whether {@code {a,b}} means alternatives. */
  public static Pattern compile(String glob, boolean braces) {
    return Pattern.compile(toRegex(glob, braces));
  }

  private static String toRegex(String glob, boolean braces) {
    StringBuilder regex = new StringBuilder(glob.length() * 2);
    int depth = 0;
    int i = 0;
    while (i < glob.length()) {
      char c = glob.charAt(i);
      if (c == '*' && glob.startsWith("**/", i) && (i == 0 || glob.charAt(i - 1) == '/')) {
        regex.append("(?:.*/)?");
        i += 3;
      } else if (c == '*' && glob.startsWith("**", i)) {
        regex.append(".*");
        i += 2;
      } else if (c == '*') {
        regex.append("[^/]*");
        i++;
      } else if (c == '?') {
        regex.append("[^/]");
        i++;
      } else if (c == '[' && classEnd(glob, i) > 0) {
        i = appendClass(glob, i, classEnd(glob, i), regex);
      } else if (c == '\\' && i + 1 < glob.length()) {
        regex.append(Pattern.quote(String.valueOf(glob.charAt(i + 1))));
        i += 2;
      } else if (braces && c == '{') {
        regex.append("(?:");
        depth++;
        i++;
      } else if (braces && c == ',' && depth > 0) {
        regex.append('|');
        i++;
      } else if (braces && c == '}' && depth > 0) {
        regex.append(')');
        depth--;
        i++;
      } else {
        regex.append(Pattern.quote(String.valueOf(c)));
        i++;
      }
    }
    while (depth-- > 0) {
      regex.append(')');
    }
    return regex.toString();
  }

  /** The index of the {@code ]} closing the class at {@code open}, or -1 (then it is literal). */
  private static int classEnd(String glob, int open) {
    int first = open + 1;
    if (first < glob.length() && (glob.charAt(first) == '!' || glob.charAt(first) == '^')) {
      first++;
    }
    return first < glob.length() ? glob.indexOf(']', first + 1) : -1;
  }

  private static int appendClass(String glob, int open, int close, StringBuilder regex) {
    int i = open + 1;
    regex.append('[');
    if (glob.charAt(i) == '!' || glob.charAt(i) == '^') {
      regex.append('^');
      i++;
    }
    for (int j = i; j < close; j++) {
      char c = glob.charAt(j);
      regex.append(c == '-' || Character.isLetterOrDigit(c) ? String.valueOf(c) : "\\" + c);
    }
    regex.append("&&[^/]]");
    return close + 1;
  }
}
