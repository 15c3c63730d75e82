package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.http.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The README's five-minute tour, step by step as written, on the Docker backend (host networking,
 * the image CI builds): create, exec with its exit code, stdin forwarded, {@code cp} of a file to
 * {@code /tmp} and back, of a tree into the workspace and back, pause, resume, delete. The tour's
 * {@code python3}/{@code node} step needs the default image's tools and is left to its tests.
 */
class DockerTourTest {
  @RegisterExtension final ServerProcess paddock = new ServerProcess();

  private ServerProcess.Run ok(String... args) throws Exception {
    ServerProcess.Run run = paddock.cli(args);
    assertThat(run.exit()).as("paddock %s: %s", String.join(" ", args), run.err()).isZero();
    return run;
  }

  @Test
  void theReadmeTourWorksAsWrittenOnDocker() throws Exception {
    TestDocker.require();
    paddock.start(TestDocker.serverSettings());
    Map<?, ?> created =
        (Map<?, ?>)
            Json.parseAny(ok("sandbox", "create", "--json").out().getBytes(StandardCharsets.UTF_8));
    String id = (String) created.get("id");
    try {
      ServerProcess.Run three = paddock.cli("exec", id, "--", "echo hello; exit 3");
      assertThat(three.exit()).isEqualTo(3);
      assertThat(three.out()).isEqualTo("hello\n");
      assertThat(paddock.cli(Map.of(), "a\nb\nc\n", "exec", "-i", id, "--", "wc -l").out().trim())
          .isEqualTo("3");

      Path local = paddock.dataDir().resolve("tour");
      Files.createDirectories(local.resolve("src/lib"));
      Files.writeString(local.resolve("notes.txt"), "my notes\n");
      Files.writeString(local.resolve("src/lib/a.txt"), "a\n");
      ok("cp", local.resolve("notes.txt").toString(), id + ":/tmp/notes.txt");
      ok("cp", id + ":/tmp/notes.txt", local.resolve("notes-back.txt").toString());
      assertThat(local.resolve("notes-back.txt")).hasContent("my notes");
      ok("cp", local.resolve("src").toString(), id + ":/workspace/project/");
      ok("cp", id + ":/workspace/project/src", local.resolve("src-back").toString());
      assertThat(local.resolve("src-back/lib/a.txt")).hasContent("a");

      ok("sandbox", "pause", id);
      ok("sandbox", "resume", id);
      assertThat(ok("exec", id, "--", "cat /tmp/notes.txt /workspace/project/src/lib/a.txt").out())
          .isEqualTo("my notes\na\n");
    } finally {
      ok("sandbox", "delete", id);
    }
    assertThat(
            (List<?>)
                Json.parseAny(
                    ok("sandbox", "list", "--json").out().getBytes(StandardCharsets.UTF_8)))
        .isEmpty();
    assertThat(TestDocker.run("ps", "-a", "--format", "{{.Names}}"))
        .doesNotContain("paddock-" + id);
  }
}
