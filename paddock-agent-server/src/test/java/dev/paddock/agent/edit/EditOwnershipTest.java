package dev.paddock.agent.edit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.agent.user.RunAs;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** With {@code --run-as}, new files belong to the user and edited files keep their owner. */
class EditOwnershipTest {
  private static final RunAs NOBODY = new RunAs(65534, 65534);

  @RegisterExtension final AgentFixture agent = new AgentFixture(b -> b.runAs(NOBODY));

  @BeforeAll
  static void needsRoot() {
    assumeThat(System.getProperty("user.name"))
        .as("giving files to another user needs the agent (this JVM) to run as root")
        .isEqualTo("root");
  }

  private HttpResponse<String> edit(Map<String, Object> body) throws Exception {
    return agent.postJson("/api/file/edit", dev.paddock.http.Json.string(body));
  }

  private static int uid(Path path) throws Exception {
    return (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
  }

  private static int gid(Path path) throws Exception {
    return (Integer) Files.getAttribute(path, "unix:gid", LinkOption.NOFOLLOW_LINKS);
  }

  @Test
  void createdFilesAndTheirNewParentsBelongToTheCommandUser() throws Exception {
    Path file = agent.workspace().resolve("made/by/editor.txt");

    HttpResponse<String> created =
        edit(Map.of("command", "create", "path", file.toString(), "file_text", "hi\n"));

    assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
    for (Path p : new Path[] {file, file.getParent(), file.getParent().getParent()}) {
      assertThat(uid(p)).as("owner of %s", p).isEqualTo(65534);
      assertThat(gid(p)).as("group of %s", p).isEqualTo(65534);
    }
  }

  @Test
  void editedFilesKeepTheirOwnerAndGroup() throws Exception {
    Path file = agent.workspace().resolve("owned.txt");
    Files.writeString(file, "root's text\n");
    Files.setAttribute(file, "unix:uid", 1234, LinkOption.NOFOLLOW_LINKS);
    Files.setAttribute(file, "unix:gid", 4321, LinkOption.NOFOLLOW_LINKS);

    HttpResponse<String> edited =
        edit(
            Map.of(
                "command", "str_replace",
                "path", file.toString(),
                "old_str", "root's",
                "new_str", "still 1234's"));

    assertThat(edited.statusCode()).as(edited.body()).isEqualTo(200);
    assertThat(Files.readString(file)).isEqualTo("still 1234's text\n");
    assertThat(uid(file)).isEqualTo(1234);
    assertThat(gid(file)).isEqualTo(4321);
  }
}
