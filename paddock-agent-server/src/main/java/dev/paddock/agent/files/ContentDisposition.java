package dev.paddock.agent.files;

import java.nio.charset.StandardCharsets;

/**
 * {@code Content-Disposition: attachment} values (RFC 6266). A name of printable ASCII goes in a
 * quoted {@code filename}; any other name gets an ASCII stand-in there (each other character
 * becomes {@code _}) plus the exact name percent-encoded as UTF-8 in {@code filename*} (RFC 8187).
 */
final class ContentDisposition {
  private ContentDisposition() {}

  static String attachment(String filename) {
    String fallback = asciiFallback(filename);
    String header = "attachment; filename=\"" + fallback + "\"";
    if (fallback.equals(filename)) {
      return header;
    }
    return header + "; filename*=UTF-8''" + percentEncode(filename);
  }

  /** Printable ASCII with quote and backslash replaced, so it is safe inside a quoted string. */
  private static String asciiFallback(String name) {
    StringBuilder out = new StringBuilder(name.length());
    name.codePoints()
        .forEach(c -> out.append(c >= ' ' && c < 127 && c != '"' && c != '\\' ? (char) c : '_'));
    return out.toString();
  }

  /** RFC 8187 {@code value-chars}: attr-char as is, every other UTF-8 byte as {@code %XX}. */
  private static String percentEncode(String name) {
    StringBuilder out = new StringBuilder();
    for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (isAttrChar(c)) {
        out.append((char) c);
      } else {
        out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)));
        out.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return out.toString();
  }

  private static boolean isAttrChar(int c) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9')
        || "!#$&+-.^_`|~".indexOf(c) >= 0;
  }
}
