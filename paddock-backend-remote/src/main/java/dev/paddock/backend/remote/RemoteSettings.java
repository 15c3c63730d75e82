package dev.paddock.backend.remote;

import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The remote backend's settings.
 *
 * @param hosts the runtime APIs ({@code PADDOCK_REMOTE_RUNTIMES}), at least one
 * @param client this control plane's tag ({@code PADDOCK_REMOTE_CLIENT}): the runtime APIs keep it
 *     with each session, and {@code list} (adoption, reaping) sees only sessions carrying it
 * @param timeout connect and read timeout of each call but start and resume ({@code
 *     PADDOCK_REMOTE_TIMEOUT}); a GET that times out is tried once more
 * @param startTimeout how long start and resume may take ({@code PADDOCK_REMOTE_START_TIMEOUT})
 */
record RemoteSettings(
    List<RemoteHost> hosts, String client, Duration timeout, Duration startTimeout) {
  private static final Pattern CLIENT = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

  static final Setting<List<RemoteHost>> RUNTIMES =
      Setting.of(
              "PADDOCK_REMOTE_RUNTIMES",
              "the runtime APIs sandboxes run on, each with its X-API-Key",
              "comma-separated URL=KEY, e.g. http://10.0.0.5:8010=key1,http://10.0.0.6:8010=key2",
              RemoteSettings::parseHosts)
          .secret();
  static final Setting<String> CLIENT_TAG =
      Setting.string(
              "PADDOCK_REMOTE_CLIENT",
              "this control plane's tag on its sessions; list, adoption and reaping see only those")
          .requiring(v -> CLIENT.matcher(v).matches(), "1-64 letters, digits, '_', '.' or '-'")
          .withDefault("paddock");
  static final Setting<Duration> TIMEOUT =
      Setting.duration(
              "PADDOCK_REMOTE_TIMEOUT",
              "connect and read timeout of runtime-API calls (a timed-out GET is tried once more)")
          .withDefault(Duration.ofSeconds(10));
  static final Setting<Duration> START_TIMEOUT =
      Setting.duration("PADDOCK_REMOTE_START_TIMEOUT", "how long a runtime API may take to start")
          .withDefault(Duration.ofSeconds(120));

  static final List<Setting<?>> DECLARED = List.of(RUNTIMES, CLIENT_TAG, TIMEOUT, START_TIMEOUT);

  RemoteSettings {
    hosts = List.copyOf(hosts);
  }

  /**
   * @throws IllegalArgumentException naming the setting that is missing or invalid
   */
  static RemoteSettings from(Map<String, String> values) {
    Settings s = Settings.of(DECLARED, values);
    List<RemoteHost> hosts =
        s.find(RUNTIMES)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        RUNTIMES.name()
                            + " is required with RUNTIME=remote: "
                            + RUNTIMES.allowed()));
    return new RemoteSettings(hosts, s.get(CLIENT_TAG), s.get(TIMEOUT), s.get(START_TIMEOUT));
  }

  static List<RemoteHost> parseHosts(String text) {
    List<RemoteHost> hosts = new ArrayList<>();
    for (String entry : text.split(",")) {
      String item = entry.strip();
      int eq = item.indexOf('=');
      if (eq <= 0 || eq == item.length() - 1) {
        throw new IllegalArgumentException("each entry is URL=KEY");
      }
      String url = stripSlash(item.substring(0, eq).strip());
      URI uri = URI.create(url);
      if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          || uri.getHost() == null
          || uri.getQuery() != null) {
        throw new IllegalArgumentException("'" + url + "' is not an http(s) URL without a query");
      }
      if (hosts.stream().anyMatch(h -> h.url().equals(url))) {
        throw new IllegalArgumentException("'" + url + "' is listed twice");
      }
      hosts.add(new RemoteHost(url, item.substring(eq + 1).strip()));
    }
    return hosts;
  }

  private static String stripSlash(String url) {
    String stripped = url;
    while (stripped.endsWith("/")) {
      stripped = stripped.substring(0, stripped.length() - 1);
    }
    return stripped;
  }
}
