package dev.paddock.agent.files;

import static dev.paddock.agent.files.UploadDownloadTest.assertStatus;
import static dev.paddock.agent.files.UploadDownloadTest.q;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.agent.user.RunAs;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** With {@code --run-as}, everything the new file routes create belongs to the command user. */
class FileOwnershipTest {
  static final RunAs NOBODY = new RunAs(65534, 65534);

  @RegisterExtension final AgentFixture agent = new AgentFixture(b -> b.runAs(NOBODY));

  @BeforeAll
  static void needsRoot() {
    assumeThat(System.getProperty("user.name"))
        .as("switching to another user needs the agent to run as root")
        .isEqualTo("root");
  }

  private static int owner(Path path) throws Exception {
    return (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
  }

  private static int group(Path path) throws Exception {
    return (Integer) Files.getAttribute(path, "unix:gid", LinkOption.NOFOLLOW_LINKS);
  }

  @Test
  void directoriesCopiesAndExtractedEntriesBelongToTheUser() throws Exception {
    Path ws = agent.workspace();
    Files.writeString(ws.resolve("root-made.txt"), "by root");
    assertThat(
            agent
                .postJson(
                    "/api/file/create_directory",
                    "{\"path\":" + AgentFixture.quote(ws + "/a/b") + "}")
                .statusCode())
        .isEqualTo(200);
    assertThat(
            agent
                .postJson(
                    "/api/file/copy",
                    "{\"source\":"
                        + AgentFixture.quote(ws + "/root-made.txt")
                        + ",\"destination\":"
                        + AgentFixture.quote(ws + "/a/b/copy.txt")
                        + "}")
                .statusCode())
        .isEqualTo(200);
    HttpResponse<String> extracted =
        agent.send(
            agent
                .request("/api/file/upload_tar?path=" + q(ws.resolve("t/u")))
                .POST(HttpRequest.BodyPublishers.ofByteArray(tar()))
                .build());
    assertThat(extracted.statusCode()).as(extracted.body()).isEqualTo(200);

    for (Path made :
        List.of(
            ws.resolve("a"),
            ws.resolve("a/b"),
            ws.resolve("a/b/copy.txt"),
            ws.resolve("t"),
            ws.resolve("t/u"),
            ws.resolve("t/u/d"),
            ws.resolve("t/u/d/f.txt"),
            ws.resolve("t/u/d/link"))) {
      assertThat(owner(made)).as("owner of %s", made).isEqualTo(65534);
      assertThat(group(made)).as("group of %s", made).isEqualTo(65534);
    }
  }

  /**
   * Directories and links are made with the user's own file-system ids, so where the user may not
   * write (a root-owned 0755 directory) the agent refuses as {@code mkdir} run by the user would.
   */
  @Test
  void creatingWhereTheUserMayNotWriteIsForbidden() throws Exception {
    Path locked = Files.createDirectories(agent.workspace().resolve("root-only"));
    Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("rwxr-xr-x"));

    assertStatus(
        agent.postJson(
            "/api/file/create_directory", "{\"path\":" + AgentFixture.quote(locked + "/sub") + "}"),
        403,
        "permission denied on '" + locked.resolve("sub") + "'");
    assertStatus(
        agent.send(
            agent
                .request("/api/file/upload_tar?path=" + q(locked))
                .POST(HttpRequest.BodyPublishers.ofByteArray(CreationRaceTest.tarWithALink()))
                .build()),
        403,
        "permission denied on '" + locked.resolve("d") + "'");
    assertThat(locked).isEmptyDirectory();
  }

  private static byte[] tar() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (TarArchiveOutputStream out = new TarArchiveOutputStream(bytes)) {
      out.putArchiveEntry(new TarArchiveEntry("d/"));
      out.closeArchiveEntry();
      byte[] content = "hello".getBytes(StandardCharsets.UTF_8);
      TarArchiveEntry file = new TarArchiveEntry("d/f.txt");
      file.setSize(content.length);
      out.putArchiveEntry(file);
      out.write(content);
      out.closeArchiveEntry();
      TarArchiveEntry link = new TarArchiveEntry("d/link", TarConstants.LF_SYMLINK);
      link.setLinkName("f.txt");
      out.putArchiveEntry(link);
      out.closeArchiveEntry();
    }
    return bytes.toByteArray();
  }
}
