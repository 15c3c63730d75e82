package dev.paddock.http;

import com.sun.net.httpserver.Headers;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;

/**
 * A parsed, validated request line and header block (RFC 9112 §3, §5). Parsing is strict where
 * leniency has caused smuggling or hangs elsewhere: CRLF only, token header names, no obsolete line
 * folding, one framing (Content-Length or chunked, never both), limits on every size.
 */
record RequestHead(
    String method,
    URI uri,
    String version,
    Headers headers,
    long contentLength,
    boolean chunked,
    boolean expectContinue) {

  /** Length of a request with neither Content-Length nor Transfer-Encoding: no body. */
  static final long NO_BODY = 0;

  boolean http11() {
    return version.equals("HTTP/1.1");
  }

  /** Whether the client asked to keep the connection (HTTP/1.1 default, 1.0 opt-in). */
  boolean keepAlive() {
    List<String> connection = headers.get("Connection");
    boolean close = hasToken(connection, "close");
    return http11() ? !close : hasToken(connection, "keep-alive") && !close;
  }

  static boolean hasToken(List<String> values, String token) {
    if (values == null) {
      return false;
    }
    for (String value : values) {
      for (String part : value.split(",")) {
        if (part.trim().equalsIgnoreCase(token)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Reads and validates one request head from {@code in}. */
  static RequestHead read(WireInput in, HttpServerConfig config) throws IOException {
    String line = in.readLine(config.maxUriLength() + 32, 414, "the request line");
    int budget = config.maxHeaderBytes() - line.length() - 2;
    int firstSpace = line.indexOf(' ');
    int lastSpace = line.lastIndexOf(' ');
    if (firstSpace <= 0 || lastSpace == firstSpace) {
      throw new ProtocolError(400, "malformed request line; expected 'METHOD target HTTP/1.1'");
    }
    String method = line.substring(0, firstSpace);
    String target = line.substring(firstSpace + 1, lastSpace);
    String version = line.substring(lastSpace + 1);
    if (!isToken(method)) {
      throw new ProtocolError(400, "malformed request method");
    }
    if (target.length() > config.maxUriLength()) {
      throw new ProtocolError(414, "request target is longer than " + config.maxUriLength());
    }
    if (!version.equals("HTTP/1.1") && !version.equals("HTTP/1.0")) {
      throw new ProtocolError(
          version.startsWith("HTTP/") ? 505 : 400, "unsupported protocol version; use HTTP/1.1");
    }
    URI uri = parseTarget(target);
    Headers headers = readHeaders(in, config, budget);
    return framed(method, uri, version, headers);
  }

  private static URI parseTarget(String target) throws ProtocolError {
    if (target.isEmpty() || !(target.startsWith("/") || target.startsWith("http"))) {
      throw new ProtocolError(400, "request target must be an absolute path such as /health");
    }
    URI uri;
    try {
      uri = new URI(target);
    } catch (URISyntaxException e) {
      throw new ProtocolError(400, "malformed request target: " + e.getReason());
    }
    if (uri.getRawPath() == null || !uri.getRawPath().startsWith("/")) {
      throw new ProtocolError(400, "request target must have an absolute path");
    }
    return uri;
  }

  private static Headers readHeaders(WireInput in, HttpServerConfig config, int budget)
      throws IOException {
    Headers headers = new Headers();
    int left = budget;
    int count = 0;
    while (true) {
      String line =
          in.readLine(Math.min(config.maxHeaderLineBytes(), Math.max(0, left)), 431, "a header");
      left -= line.length() + 2;
      if (line.isEmpty()) {
        return headers;
      }
      if (++count > config.maxHeaderCount()) {
        throw new ProtocolError(431, "more than " + config.maxHeaderCount() + " header fields");
      }
      addHeader(headers, line);
    }
  }

  private static void addHeader(Headers headers, String line) throws ProtocolError {
    char first = line.charAt(0);
    if (first == ' ' || first == '\t') {
      throw new ProtocolError(400, "obsolete header line folding is not accepted");
    }
    int colon = line.indexOf(':');
    if (colon <= 0 || !isToken(line.substring(0, colon))) {
      throw new ProtocolError(400, "malformed header field name");
    }
    String value = line.substring(colon + 1).strip();
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if ((c < 0x20 && c != '\t') || c == 0x7f) {
        throw new ProtocolError(400, "control character in header " + line.substring(0, colon));
      }
    }
    headers.add(line.substring(0, colon), value);
  }

  private static RequestHead framed(String method, URI uri, String version, Headers headers)
      throws ProtocolError {
    List<String> encodings = headers.get("Transfer-Encoding");
    List<String> lengths = headers.get("Content-Length");
    boolean chunked = false;
    long length = NO_BODY;
    if (encodings != null) {
      if (lengths != null) {
        throw new ProtocolError(400, "both Transfer-Encoding and Content-Length given");
      }
      if (encodings.size() != 1 || !encodings.get(0).equalsIgnoreCase("chunked")) {
        throw new ProtocolError(
            501, "unsupported Transfer-Encoding " + encodings + "; only 'chunked' is implemented");
      }
      chunked = true;
    } else if (lengths != null) {
      length = contentLength(lengths);
    }
    return new RequestHead(
        method, uri, version, headers, length, chunked, expectsContinue(headers, version));
  }

  private static long contentLength(List<String> values) throws ProtocolError {
    String first = values.get(0);
    for (String value : values) {
      if (!value.equals(first)) {
        throw new ProtocolError(400, "conflicting Content-Length headers");
      }
    }
    if (first.isEmpty() || first.length() > 18 || !first.chars().allMatch(Character::isDigit)) {
      throw new ProtocolError(400, "invalid Content-Length '" + shorten(first) + "'");
    }
    return Long.parseLong(first);
  }

  private static boolean expectsContinue(Headers headers, String version) throws ProtocolError {
    String expect = headers.getFirst("Expect");
    if (expect == null) {
      return false;
    }
    if (!expect.toLowerCase(Locale.ROOT).equals("100-continue")) {
      throw new ProtocolError(417, "unsupported Expect '" + shorten(expect) + "'");
    }
    return version.equals("HTTP/1.1");
  }

  static String shorten(String text) {
    return text.length() <= 64 ? text : text.substring(0, 64) + "...";
  }

  private static boolean isToken(String text) {
    if (text.isEmpty()) {
      return false;
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      boolean ok =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
      if (!ok) {
        return false;
      }
    }
    return true;
  }
}
