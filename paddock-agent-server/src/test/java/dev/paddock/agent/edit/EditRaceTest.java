package dev.paddock.agent.edit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.agent.SwappedDirectory;
import dev.paddock.http.Json;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * D3 for the editor: while a workspace directory flips between a real directory and a link to a
 * canary outside the only root, at least 10,000 {@code create}, {@code str_replace} and {@code
 * view} commands through it never read or change anything in the canary. As root the agent runs
 * commands as nobody, the production set-up of the Docker backend.
 */
class EditRaceTest {
  private static final int ATTEMPTS = 10_000;

  @RegisterExtension final AgentFixture agent = AgentFixture.confinedToWorkspace();

  @Test
  void noEditReachesOutsideTheRootThroughASwappedDirectory() throws Exception {
    SwappedDirectory d =
        SwappedDirectory.start(
            agent.workspace(), agent.scratch(), Map.of("notes.txt", "ping\nsecond line\n"));
    try (d) {
      String dir = d.path().toString();
      d.race(
          ATTEMPTS,
          4,
          i ->
              switch (i % 3) {
                case 0 ->
                    edit(
                        "command",
                        "create",
                        "path",
                        dir + "/new-" + (i % 16),
                        "file_text",
                        "planted\n",
                        "overwrite",
                        true);
                case 1 ->
                    // Flips the word back and forth; a 409 when the other client got there first.
                    edit(
                        "command",
                        "str_replace",
                        "path",
                        dir + "/notes.txt",
                        "old_str",
                        i % 2 == 0 ? "ping" : "pong",
                        "new_str",
                        i % 2 == 0 ? "pong" : "ping");
                default -> edit("command", "view", "path", dir + "/notes.txt");
              },
          Set.of(200, 403));
    }

    assertThat(d.escapes())
        .as("edits that saw the canary or failed (statuses %s, %s flips)", d.statuses(), d.flips())
        .isEmpty();
    assertThat(d.canaryNow()).as("the canary after the race").isEqualTo(d.canaryBefore());
    assertThat(d.count(200))
        .as("edits that went through the real directory (statuses %s)", d.statuses())
        .isGreaterThan(SwappedDirectory.LEAST_EACH);
    assertThat(d.count(403))
        .as("edits that met the link (refused: outside the roots)")
        .isGreaterThan(SwappedDirectory.LEAST_EACH);
    assertThat(d.flips()).as("flips during the run").isGreaterThan(10);
  }

  private HttpResponse<String> edit(Object... fieldsAndValues) throws Exception {
    Map<String, Object> body = new LinkedHashMap<>();
    for (int i = 0; i < fieldsAndValues.length; i += 2) {
      body.put((String) fieldsAndValues[i], fieldsAndValues[i + 1]);
    }
    return agent.postJson("/api/file/edit", Json.string(body));
  }
}
