package dev.paddock.agent.edit;

/**
 * The line ending a file uses, so text an agent sends with {@code \n} lands in a CRLF file as CRLF
 * and a CRLF file stays CRLF. A file whose first 64 KiB hold more CRLF than bare LF endings is
 * CRLF; any other is LF.
 */
enum LineEnding {
  LF("\n"),
  CRLF("\r\n");

  private final String text;

  LineEnding(String text) {
    this.text = text;
  }

  String text() {
    return text;
  }

  /** Judged on the first 64 KiB: enough to tell, and it keeps large edits to fewer passes. */
  static LineEnding of(byte[] bytes, int length) {
    int crlf = 0;
    int lf = 0;
    for (int i = 0, end = Math.min(length, 1 << 16); i < end; i++) {
      if (bytes[i] == '\n') {
        if (i > 0 && bytes[i - 1] == '\r') {
          crlf++;
        } else {
          lf++;
        }
      }
    }
    return crlf > lf ? CRLF : LF;
  }

  /** {@code text} with each bare {@code \n} written in this ending (CRLF already there is kept). */
  String apply(String text) {
    if (this == LF || text.indexOf('\n') < 0) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length() + 16);
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\n' && (i == 0 || text.charAt(i - 1) != '\r')) {
        out.append('\r');
      }
      out.append(c);
    }
    return out.toString();
  }
}
