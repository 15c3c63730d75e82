package dev.paddock.backend.process;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a setting such as {@code java -cp 'a b.jar' Main} into words the way a POSIX shell does
 * for quoting only: single quotes keep everything literally, double quotes keep everything but
 * {@code \"} and {@code \\}, a backslash outside quotes escapes the next character. Nothing is
 * expanded ({@code $VAR}, globs, {@code ~} stay as written).
 */
final class CommandLine {
  private CommandLine() {}

  /**
   * The words of {@code line}.
   *
   * @throws IllegalArgumentException on an unterminated quote or a trailing backslash
   */
  static List<String> split(String line) {
    List<String> words = new ArrayList<>();
    StringBuilder word = new StringBuilder();
    boolean inWord = false;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (Character.isWhitespace(c)) {
        if (inWord) {
          words.add(word.toString());
          word.setLength(0);
          inWord = false;
        }
        continue;
      }
      inWord = true;
      i =
          switch (c) {
            case '\'' -> singleQuoted(line, i, word);
            case '"' -> doubleQuoted(line, i, word);
            case '\\' -> escaped(line, i, word);
            default -> {
              word.append(c);
              yield i;
            }
          };
    }
    if (inWord) {
      words.add(word.toString());
    }
    return List.copyOf(words);
  }

  private static int singleQuoted(String line, int open, StringBuilder word) {
    int close = line.indexOf('\'', open + 1);
    if (close < 0) {
      throw new IllegalArgumentException("unterminated ' in: " + line);
    }
    word.append(line, open + 1, close);
    return close;
  }

  private static int doubleQuoted(String line, int open, StringBuilder word) {
    for (int i = open + 1; i < line.length(); i++) {
      char c = line.charAt(i);
      if (c == '"') {
        return i;
      }
      if (c == '\\' && i + 1 < line.length() && "\"\\$`".indexOf(line.charAt(i + 1)) >= 0) {
        c = line.charAt(++i);
      }
      word.append(c);
    }
    throw new IllegalArgumentException("unterminated \" in: " + line);
  }

  private static int escaped(String line, int at, StringBuilder word) {
    if (at + 1 >= line.length()) {
      throw new IllegalArgumentException("trailing \\ in: " + line);
    }
    word.append(line.charAt(at + 1));
    return at + 1;
  }
}
