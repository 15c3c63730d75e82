package dev.paddock.agent.edit;

/**
 * Lines numbered as {@code cat -n} prints them and as OpenHands' editor returns them: the number
 * right-aligned in six columns, a tab, the line. Holds at most {@code maxChars} characters of file
 * text; a line that does not fit is cut and the result marked truncated, with the note OpenHands
 * uses, so the model knows to narrow its range or grep. Not thread-safe.
 */
final class NumberedLines {
  static final String TRUNCATED_NOTE =
      "<response clipped><NOTE>Due to the max output limit, only part of this file has been shown"
          + " to you. You should retry this tool after you have searched inside the file with"
          + " `grep -n` in order to find the line numbers of what you are looking for.</NOTE>";

  private final StringBuilder text = new StringBuilder();
  private final int maxChars;
  private int chars;
  private int first = -1;
  private int last = -1;
  private boolean truncated;

  NumberedLines(int maxChars) {
    this.maxChars = maxChars;
  }

  /** Adds a line (without its line ending); false once the output is full. */
  boolean add(int number, String line) {
    if (truncated) {
      return false;
    }
    String kept = line;
    if (chars + line.length() > maxChars) {
      kept = line.substring(0, Math.max(0, maxChars - chars));
      truncated = true;
    }
    if (first < 0) {
      first = number;
    }
    last = number;
    chars += kept.length();
    String digits = Integer.toString(number);
    for (int pad = digits.length(); pad < 6; pad++) {
      text.append(' ');
    }
    text.append(digits).append('\t').append(kept).append('\n');
    return !truncated;
  }

  boolean truncated() {
    return truncated;
  }

  /** The first line shown; empty output reports the line asked for. */
  int firstLine(int fallback) {
    return first < 0 ? fallback : first;
  }

  int lastLine(int fallback) {
    return last < 0 ? fallback : last;
  }

  /** OpenHands' wording: "Here's the result of running `cat -n` on {what}:" and the lines. */
  String render(String what) {
    StringBuilder out = new StringBuilder(text.length() + 200);
    out.append("Here's the result of running `cat -n` on ").append(what).append(":\n");
    out.append(text);
    if (truncated) {
      out.append(TRUNCATED_NOTE).append('\n');
    }
    return out.toString();
  }
}
