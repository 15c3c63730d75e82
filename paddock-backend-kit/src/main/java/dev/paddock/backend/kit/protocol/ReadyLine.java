package dev.paddock.backend.kit.protocol;

import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The line an agent-server prints on standard output once it serves: {@code paddock agent-server
 * listening on http://HOST:PORT (...)}. Its launchers read the port from it, so it is the agent's
 * readiness signal; this class writes it (in the agent) and is the one parser of it (backends,
 * benches).
 *
 * @param host the address the agent listens on, as printed ({@code 127.0.0.1}, {@code 0.0.0.0})
 * @param port its port
 */
public record ReadyLine(String host, int port) {
  private static final String PREFIX = "paddock agent-server listening on http://";
  private static final Pattern LINE =
      Pattern.compile("^" + Pattern.quote(PREFIX) + "(\\S+):(\\d{1,5})(?:\\s.*)?$");

  public ReadyLine {
    Objects.requireNonNull(host, "host");
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port " + port + " is outside 1..65535");
    }
  }

  /**
   * The ready line in a line of the agent's output; empty for any other line. Leading and trailing
   * white space (a carriage return, a log prefix's padding) is ignored; anything else before the
   * text is not.
   */
  public static Optional<ReadyLine> parse(String line) {
    Matcher m = LINE.matcher(line.strip());
    if (!m.matches()) {
      return Optional.empty();
    }
    int port = Integer.parseInt(m.group(2));
    return port >= 1 && port <= 65535
        ? Optional.of(new ReadyLine(m.group(1), port))
        : Optional.empty();
  }

  /** The line, with {@code remark} in parentheses after the URL (empty: none). */
  public String format(String remark) {
    return PREFIX + host + ":" + port + (remark.isEmpty() ? "" : " (" + remark + ")");
  }
}
