package dev.paddock.agent.git;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/** Makes repository metadata safe to put in a response header. */
final class HeaderValues {
  /** {@code scheme://userinfo@}: everything between {@code ://} and the authority's last '@'. */
  private static final Pattern USERINFO =
      Pattern.compile("(?m)^(\\s*[A-Za-z][A-Za-z0-9+.-]*://)[^/?#\\r\\n]*@");

  /** A query parameter value, up to the next '&', '#' or line end. */
  private static final Pattern QUERY_VALUE = Pattern.compile("([?&][^=&#\\r\\n]*=)[^&#\\r\\n]*");

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private HeaderValues() {}

  /**
   * A remote URL with its credentials replaced by {@code ***}: the whole user-info part ({@code
   * https://user:token@host/x} becomes {@code https://***@host/x}) and every query value ({@code
   * ?token=abc} becomes {@code ?token=***}). Works line by line, for values that span lines.
   */
  static String redactRemote(String url) {
    String withoutUser = USERINFO.matcher(url).replaceAll("$1***@");
    return QUERY_VALUE.matcher(withoutUser).replaceAll("$1***");
  }

  /**
   * Percent-encodes the UTF-8 bytes of {@code value} except printable ASCII other than {@code %}:
   * the result is a valid header value, and percent-decoding it gives {@code value} back.
   */
  static String percentEncode(String value) {
    StringBuilder out = new StringBuilder(value.length());
    for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c > ' ' && c < 0x7f && c != '%') {
        out.append((char) c);
      } else {
        out.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
      }
    }
    return out.toString();
  }
}
