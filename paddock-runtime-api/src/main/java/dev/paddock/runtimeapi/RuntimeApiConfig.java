package dev.paddock.runtimeapi;

import java.nio.file.Path;
import java.util.Objects;

/**
 * How a runtime API runs.
 *
 * @param host the address it binds
 * @param port its port (0: any free one)
 * @param apiKey the key every request must carry in {@code X-API-Key}
 * @param maxSandboxes the most sessions it holds at once (past it {@code /start} is a 429)
 * @param secret what session keys and agent admin keys are derived from (HMAC-SHA256)
 * @param dataDir where it keeps its sessions ({@code runtime-api/sessions.json}), so a restart
 *     knows every sandbox it runs; one runtime API per data directory
 */
public record RuntimeApiConfig(
    String host, int port, String apiKey, int maxSandboxes, String secret, Path dataDir) {
  public RuntimeApiConfig {
    Objects.requireNonNull(dataDir, "dataDir");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(apiKey, "apiKey");
    Objects.requireNonNull(secret, "secret");
    if (maxSandboxes < 1) {
      throw new IllegalArgumentException("maxSandboxes must be at least 1");
    }
  }
}
