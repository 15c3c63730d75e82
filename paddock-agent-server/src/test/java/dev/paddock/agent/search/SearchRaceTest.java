package dev.paddock.agent.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.agent.SwappedDirectory;
import dev.paddock.http.Json;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * D3 for the search routes: while a workspace directory flips between a real directory and a link
 * to a canary outside the only root, 10,000 greps and globs over the workspace and through the
 * directory never print a canary file's line or name.
 */
class SearchRaceTest {
  private static final int ATTEMPTS = 10_000;

  @RegisterExtension final AgentFixture agent = AgentFixture.confinedToWorkspace();

  @Test
  void noSearchShowsAFileOutsideTheRootThroughASwappedDirectory() throws Exception {
    SwappedDirectory d =
        SwappedDirectory.start(
            agent.workspace(), agent.scratch(), Map.of("a.txt", "needle in a\n", "b.txt", "b\n"));
    try (d) {
      String ws = agent.workspace().toString();
      String dir = d.path().toString();
      d.race(
          ATTEMPTS,
          4,
          i ->
              switch (i % 4) {
                // The canary's copies hold CANARY-SECRET on their first line: any match there
                // (or a glob listing it) would print it.
                case 0 -> search("grep", ws, "pattern", "CANARY|needle");
                case 1 -> search("grep", dir, "pattern", "SECRET", "fixed_strings", true);
                case 2 -> search("grep", dir + "/a.txt", "pattern", ".", "context", 3);
                default -> search("glob", ws, "pattern", "**/*");
              });
    }

    assertThat(d.escapes())
        .as(
            "searches that showed the canary or failed (statuses %s, %s flips)",
            d.statuses(), d.flips())
        .isEmpty();
    assertThat(d.canaryNow()).as("the canary after the race").isEqualTo(d.canaryBefore());
    assertThat(d.count(200))
        .as("searches answered (statuses %s)", d.statuses())
        .isGreaterThan(ATTEMPTS / 2);
    assertThat(d.flips()).as("flips during the run").isGreaterThan(10);
  }

  private java.net.http.HttpResponse<String> search(String route, String path, Object... more)
      throws Exception {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("path", path);
    for (int i = 0; i < more.length; i += 2) {
      body.put((String) more[i], more[i + 1]);
    }
    return agent.postJson("/api/file/" + route, Json.string(body));
  }
}
