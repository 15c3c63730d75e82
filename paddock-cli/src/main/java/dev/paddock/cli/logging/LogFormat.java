package dev.paddock.cli.logging;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.List;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;

/** How one event becomes one line (a stack trace, in text, follows on the lines after it). */
public enum LogFormat {
  /** {@code <ts> <LEVEL> <logger> - <msg> k=v k=v}. */
  TEXT {
    @Override
    String line(
        Instant ts,
        Level level,
        String logger,
        String thread,
        String msg,
        List<KeyValuePair> fields,
        Throwable thrown) {
      StringBuilder out = new StringBuilder(128);
      out.append(ts).append(' ').append(level).append(' ').append(logger).append(" - ");
      out.append(msg);
      for (KeyValuePair field : fields) {
        out.append(' ').append(field.key).append('=').append(field.value);
      }
      out.append('\n');
      if (thrown != null) {
        out.append(stackTrace(thrown));
      }
      return out.toString();
    }
  },

  /**
   * One JSON object per line: {@code ts, level, logger, thread, msg}, then each key-value field
   * (numbers and booleans as such), then {@code error} with the stack trace.
   */
  JSON {
    @Override
    String line(
        Instant ts,
        Level level,
        String logger,
        String thread,
        String msg,
        List<KeyValuePair> fields,
        Throwable thrown) {
      StringBuilder out = new StringBuilder(192);
      out.append("{\"ts\":");
      quote(out, ts.toString());
      out.append(",\"level\":");
      quote(out, level.toString());
      out.append(",\"logger\":");
      quote(out, logger);
      out.append(",\"thread\":");
      quote(out, thread);
      out.append(",\"msg\":");
      quote(out, msg);
      for (KeyValuePair field : fields) {
        out.append(',');
        quote(out, field.key);
        out.append(':');
        if (field.value instanceof Number || field.value instanceof Boolean) {
          out.append(field.value);
        } else {
          quote(out, String.valueOf(field.value));
        }
      }
      if (thrown != null) {
        out.append(",\"error\":");
        quote(out, stackTrace(thrown));
      }
      return out.append("}\n").toString();
    }
  };

  abstract String line(
      Instant ts,
      Level level,
      String logger,
      String thread,
      String msg,
      List<KeyValuePair> fields,
      Throwable thrown);

  private static String stackTrace(Throwable thrown) {
    StringWriter text = new StringWriter();
    thrown.printStackTrace(new PrintWriter(text));
    return text.toString();
  }

  /** A JSON string (RFC 8259 section 7): quotes, backslashes and control characters escaped. */
  static void quote(StringBuilder out, String value) {
    out.append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
