package dev.paddock.backend.ssh;

import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One sandbox host as written in {@code PADDOCK_SSH_HOSTS}: {@code [user@]host[:port]}, an IPv6
 * address in brackets ({@code root@[::1]:2222}).
 *
 * @param user the login user (default: the control plane's user)
 * @param host the host name or address
 * @param port the SSH port (default 22)
 */
record SshTarget(String user, String host, int port) {
  private static final Pattern FORM =
      Pattern.compile(
          "(?:([A-Za-z0-9._][A-Za-z0-9._-]*)@)?(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+)"
              + "(?::(\\d{1,5}))?");

  SshTarget {
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(host, "host");
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port " + port + " is not 1-65535");
    }
  }

  /**
   * Parses {@code [user@]host[:port]}.
   *
   * @throws IllegalArgumentException for anything else (also an option-like {@code -oProxy...})
   */
  static SshTarget parse(String text, String defaultUser) {
    Matcher m = FORM.matcher(text.strip());
    if (!m.matches() || m.group(2).startsWith("-")) {
      throw new IllegalArgumentException("'" + text + "' is not [user@]host[:port]");
    }
    String host = m.group(2).replace("[", "").replace("]", "");
    int port = m.group(3) == null ? 22 : Integer.parseInt(m.group(3));
    return new SshTarget(m.group(1) == null ? defaultUser : m.group(1), host, port);
  }

  /** How it is written in handles and logs: {@code user@host:port}. */
  @Override
  public String toString() {
    return user + "@" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }

  /** The host as {@code known_hosts} names it: {@code host} on 22, else {@code [host]:port}. */
  String knownHostsName() {
    return port == 22 ? host : "[" + host + "]:" + port;
  }
}
