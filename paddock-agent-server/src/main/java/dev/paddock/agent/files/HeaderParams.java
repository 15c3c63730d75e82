package dev.paddock.agent.files;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The value and parameters of a structured header such as {@code multipart/form-data; boundary="x"}
 * or {@code form-data; name="file"; filename="a.txt"} (RFC 9110 §5.6.6). Parameter names are
 * lower-cased; quoted values are unquoted with backslash escapes removed.
 *
 * @param value the part before the first {@code ;}, trimmed and lower-cased
 * @param params the parameters in order of appearance; the first occurrence of a name wins
 */
record HeaderParams(String value, Map<String, String> params) {

  static HeaderParams parse(String header) {
    int semicolon = nextSeparator(header, 0);
    String value = header.substring(0, semicolon).trim().toLowerCase(Locale.ROOT);
    Map<String, String> params = new LinkedHashMap<>();
    int start = semicolon + 1;
    while (start < header.length()) {
      int end = nextSeparator(header, start);
      String param = header.substring(start, end).trim();
      int eq = param.indexOf('=');
      if (eq > 0) {
        String name = param.substring(0, eq).trim().toLowerCase(Locale.ROOT);
        params.putIfAbsent(name, unquote(param.substring(eq + 1).trim()));
      }
      start = end + 1;
    }
    return new HeaderParams(value, Map.copyOf(params));
  }

  /** The index of the next {@code ;} outside a quoted string, or the length. */
  private static int nextSeparator(String header, int from) {
    boolean quoted = false;
    for (int i = from; i < header.length(); i++) {
      char c = header.charAt(i);
      if (quoted && c == '\\') {
        i++;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ';' && !quoted) {
        return i;
      }
    }
    return header.length();
  }

  private static String unquote(String raw) {
    if (raw.length() < 2 || raw.charAt(0) != '"' || raw.charAt(raw.length() - 1) != '"') {
      return raw;
    }
    StringBuilder out = new StringBuilder(raw.length());
    for (int i = 1; i < raw.length() - 1; i++) {
      char c = raw.charAt(i);
      if (c == '\\' && i + 1 < raw.length() - 1) {
        c = raw.charAt(++i);
      }
      out.append(c);
    }
    return out.toString();
  }
}
