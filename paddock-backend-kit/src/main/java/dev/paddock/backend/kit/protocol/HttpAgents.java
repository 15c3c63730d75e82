package dev.paddock.backend.kit.protocol;

import dev.paddock.api.spi.SandboxAgent;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Optional;

/**
 * The standard route to sandboxes' agents: HTTP to the agent URL a runtime reports, authenticated
 * with the sandbox's admin key (what {@link dev.paddock.api.spi.SandboxBackend#agent} gets as its
 * {@code direct} argument). One shared {@link HttpClient}; close it with the control plane.
 * Thread-safe.
 */
public final class HttpAgents implements AutoCloseable {
  private final HttpClient http;
  private final Duration timeout;

  private HttpAgents(Duration timeout) {
    this.timeout = timeout;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  /**
   * @param timeout connect timeout, and the request timeout of key rotation and idle-time calls
   *     (short: a frozen agent must not hold up a pause or delete)
   */
  public static HttpAgents create(Duration timeout) {
    return new HttpAgents(timeout);
  }

  /**
   * The agent at {@code agentUrl} (its {@code agent-server} URL), reached with {@code adminKey}.
   */
  public SandboxAgent at(String agentUrl, String adminKey) {
    String base = agentUrl.endsWith("/") ? agentUrl.substring(0, agentUrl.length() - 1) : agentUrl;
    return new HttpAgent(
        http, timeout, base, AgentProtocol.ADMIN_KEY_HEADER, adminKey, Optional.empty());
  }

  /**
   * An agent-server that came with its image (OpenHands' contract): reached with its current
   * session key, archives asked for {@code workspace}; it refuses key rotation (it takes its key at
   * launch only).
   */
  public SandboxAgent launchKeyed(String agentUrl, String sessionKey, String workspace) {
    String base = agentUrl.endsWith("/") ? agentUrl.substring(0, agentUrl.length() - 1) : agentUrl;
    return new HttpAgent(
        http, timeout, base, AgentProtocol.SESSION_KEY_HEADER, sessionKey, Optional.of(workspace));
  }

  @Override
  public void close() {
    http.close();
  }
}
