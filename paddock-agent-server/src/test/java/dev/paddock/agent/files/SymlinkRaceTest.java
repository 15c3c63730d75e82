package dev.paddock.agent.files;

import static dev.paddock.agent.files.UploadDownloadTest.q;
import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.agent.SwappedDirectory;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * D3: while a thread flips a workspace directory between a real directory and a link to a canary
 * directory outside the only root, on a clock, at least 10,000 file requests through that directory
 * (upload, download, list, stat, move, copy, delete, chmod, mkdir, tar download) never read or
 * change anything in the canary. As root the agent runs commands as nobody, the production set-up
 * of the Docker backend.
 */
class SymlinkRaceTest {
  private static final int ATTEMPTS = 10_000;
  private static final int CLIENTS = 4;

  @RegisterExtension final AgentFixture agent = AgentFixture.confinedToWorkspace();

  private final List<String> namesSeen = new java.util.concurrent.CopyOnWriteArrayList<>();

  @Test
  void noRequestReachesOutsideTheRootThroughASwappedDirectory() throws Exception {
    // A name only the canary has: a listing that shows it looked inside the canary.
    Path canary = Files.createDirectories(agent.scratch().resolve("canary"));
    Files.writeString(canary.resolve("only-in-canary"), SwappedDirectory.CANARY_TEXT);
    // World-writable: the command user could create there, so only the descriptors keep mkdir out.
    SwappedDirectory d =
        SwappedDirectory.start(agent.workspace(), agent.scratch(), Map.of("secret.txt", "inside"));
    try (d) {
      d.race(ATTEMPTS, CLIENTS, i -> attempt(i, d.path()), Set.of(200, 403));
    }

    assertThat(d.escapes())
        .as(
            "requests that saw the canary or failed (statuses %s, %s flips)",
            d.statuses(), d.flips())
        .isEmpty();
    assertThat(namesSeen).as("listings that showed the canary's names").isEmpty();
    assertThat(d.canaryNow()).as("the canary directory after the race").isEqualTo(d.canaryBefore());
    assertThat(d.count(200))
        .as("requests that went through the real directory (statuses %s)", d.statuses())
        .isGreaterThan(SwappedDirectory.LEAST_EACH);
    assertThat(d.flips()).as("flips during the run").isGreaterThan(10);
    assertThat(d.count(403))
        .as("requests that met the link (refused: outside the roots)")
        .isGreaterThan(SwappedDirectory.LEAST_EACH);
  }

  /** Names repeat (modulo 16) so the directory stays small and every request stays cheap. */
  private HttpResponse<String> attempt(int i, Path d) throws Exception {
    String dir = d.toString();
    HttpResponse<String> response =
        switch (i % 10) {
          case 0 -> upload(dir + "/up-" + (i % 16));
          case 1 -> agent.get("/api/file/download?path=" + q(dir + "/secret.txt"));
          case 2 -> agent.get("/api/file/list?path=" + q(dir));
          case 3 -> agent.get("/api/file/stat?path=" + q(dir + "/only-in-canary"));
          case 4 ->
              json(
                  "move",
                  "{\"source\":%s,\"destination\":%s}",
                  dir + "/secret.txt",
                  dir + "/moved-" + (i % 16));
          case 5 ->
              json(
                  "copy",
                  "{\"source\":%s,\"destination\":%s}",
                  dir + "/secret.txt",
                  dir + "/copy-" + (i % 16));
          case 6 -> json("delete", "{\"path\":%s}", dir + "/secret.txt");
          case 7 -> json("chmod", "{\"path\":%s,\"mode\":\"0600\"}", dir + "/secret.txt");
          case 8 -> json("create_directory", "{\"path\":%s}", dir + "/made-" + (i % 16));
          default -> agent.get("/api/file/download_tar?path=" + q(dir));
        };
    if (response.statusCode() == 200 && response.body().contains("only-in-canary")) {
      namesSeen.add("attempt " + i + ": " + response.body());
    }
    return response;
  }

  private HttpResponse<String> upload(String path) throws Exception {
    return agent.send(
        agent
            .request("/api/file/upload?path=" + q(path))
            .header("Content-Type", Multipart.CONTENT_TYPE)
            .POST(Multipart.of("planted".getBytes(StandardCharsets.UTF_8)))
            .build());
  }

  private HttpResponse<String> json(String route, String format, String... paths) throws Exception {
    Object[] quoted = Stream.of(paths).map(AgentFixture::quote).toArray();
    return agent.send(
        agent
            .request("/api/file/" + route)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(String.format(format, quoted)))
            .build());
  }
}
