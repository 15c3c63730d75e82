package dev.paddock.agent.git;

import dev.paddock.agent.AgentFixture;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Fetches {@code format=git-delta} archives from the agent's real {@code GET /api/file/archive}
 * route, so the git-delta format is tested end to end over the socket: parameter parsing, path
 * checks, default excludes and {@link GitArchive} together.
 */
final class ArchiveClient {
  private final AgentFixture agent;

  ArchiveClient(AgentFixture agent) {
    this.agent = agent;
  }

  /** The archive of {@code dir} with extra query parameters ("name=value", unencoded value). */
  HttpResponse<byte[]> archive(Path dir, String... params)
      throws IOException, InterruptedException {
    StringBuilder query =
        new StringBuilder("format=git-delta&path=").append(encode(dir.toString()));
    for (String param : params) {
      int eq = param.indexOf('=');
      query.append('&').append(param, 0, eq + 1).append(encode(param.substring(eq + 1)));
    }
    return agent
        .client()
        .send(
            agent.request("/api/file/archive?" + query).GET().build(),
            HttpResponse.BodyHandlers.ofByteArray());
  }

  static Optional<String> header(HttpResponse<?> response, String name) {
    return response.headers().firstValue(name);
  }

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }
}
