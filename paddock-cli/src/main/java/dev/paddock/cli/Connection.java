package dev.paddock.cli;

import dev.paddock.client.PaddockClient;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * Where the control plane is and which API key to use: {@code --url} / {@code PADDOCK_URL}, else
 * the address the server of the data dir recorded when it bound ({@link ServerRecord}; a stale
 * record is an error), else {@code http://127.0.0.1:3000}; {@code --api-key} / {@code
 * PADDOCK_API_KEY}, else the admin key file the server wrote in its data dir on first start ({@code
 * --data-dir} / {@code PADDOCK_DATA_DIR}, default {@code ~/.paddock}).
 */
final class Connection {
  static final String DEFAULT_URL = "http://127.0.0.1:3000";

  @Option(names = "--url", description = "control plane URL (env PADDOCK_URL)")
  String url;

  @Option(names = "--api-key", description = "API key (env PADDOCK_API_KEY)")
  String apiKey;

  @Option(
      names = "--data-dir",
      description = "the server's data dir, for its address and admin.key (env PADDOCK_DATA_DIR)")
  Path dataDir;

  @Option(names = "--json", description = "print JSON for scripts")
  boolean json;

  PaddockClient client() {
    return PaddockClient.connect(URI.create(url()), key());
  }

  String url() {
    if (url != null) {
      return url;
    }
    String env = System.getenv("PADDOCK_URL");
    if (env != null && !env.isBlank()) {
      return env.trim();
    }
    return ServerRecord.liveUrl(dataDir()).orElse(DEFAULT_URL);
  }

  private String key() {
    if (apiKey != null) {
      return apiKey;
    }
    String env = System.getenv("PADDOCK_API_KEY");
    if (env != null && !env.isBlank()) {
      return env.trim();
    }
    Path file = dataDir().resolve("admin.key");
    try {
      if (Files.isReadable(file)) {
        return Files.readString(file).trim();
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + file + ": " + e.getMessage(), e);
    }
    throw new IllegalStateException(
        "no API key: pass --api-key, set PADDOCK_API_KEY, or run on the server's machine ("
            + file
            + ")");
  }

  Path dataDir() {
    if (dataDir != null) {
      return dataDir;
    }
    String env = System.getenv("PADDOCK_DATA_DIR");
    return env != null && !env.isBlank()
        ? Path.of(env)
        : Path.of(System.getProperty("user.home"), ".paddock");
  }
}
