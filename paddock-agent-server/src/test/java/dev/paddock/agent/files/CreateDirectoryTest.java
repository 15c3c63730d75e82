package dev.paddock.agent.files;

import static dev.paddock.agent.files.UploadDownloadTest.assertStatus;
import static dev.paddock.agent.files.UploadDownloadTest.q;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.paddock.agent.AgentFixture;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class CreateDirectoryTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private HttpResponse<String> createByQuery(Path dir) throws Exception {
    return agent.send(
        agent
            .request("/api/file/create_directory?path=" + q(dir))
            .POST(HttpRequest.BodyPublishers.noBody())
            .build());
  }

  @Test
  void createsParentsAndIsIdempotent() throws Exception {
    Path dir = agent.workspace().resolve("x/y/z");

    HttpResponse<String> first = createByQuery(dir);
    HttpResponse<String> again = createByQuery(dir);

    assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
    assertThat(AgentFixture.json(first)).containsEntry("success", true);
    assertThat(again.statusCode()).as(again.body()).isEqualTo(200);
    assertThat(dir).isDirectory();
  }

  @Test
  void acceptsThePathInAJsonBody() throws Exception {
    Path dir = agent.workspace().resolve("from-json");

    HttpResponse<String> response =
        agent.postJson(
            "/api/file/create_directory", "{\"path\":" + AgentFixture.quote(dir.toString()) + "}");

    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(dir).isDirectory();
  }

  @Test
  void aNameLongerThanTheFileSystemAllowsIsA400NotA500() throws Exception {
    // Found by the bad-input suite (paddock-hardening): ENAMETOOLONG was a 500.
    Path tooLong = agent.workspace().resolve("a".repeat(300));

    assertStatus(createByQuery(tooLong), 400, "longer than the file system allows");
    assertStatus(
        agent.postJson(
            "/api/file/delete", "{\"path\":" + AgentFixture.quote(tooLong.toString()) + "}"),
        400,
        "longer than the file system allows");
    assertStatus(
        agent.postJson(
            "/api/file/edit",
            "{\"command\":\"view\",\"path\":" + AgentFixture.quote(tooLong.toString()) + "}"),
        400,
        "longer than the file system allows");
  }

  @Test
  void rejectsBadRequests() throws Exception {
    Path file = Files.writeString(agent.workspace().resolve("a-file"), "x");

    assertStatus(createByQuery(file), 400, "not a directory");
    assertStatus(createByQuery(file.resolve("below")), 400, "not a directory");
    assertStatus(
        agent.postJson("/api/file/create_directory", "{\"path\":\"rel/dir\"}"), 400, "absolute");
    assertStatus(
        agent.send(
            agent
                .request("/api/file/create_directory")
                .POST(HttpRequest.BodyPublishers.noBody())
                .build()),
        422,
        "'path'");
    assertStatus(agent.postJson("/api/file/create_directory", "{\"dir\":\"/x\"}"), 422, "dir");
  }

  @Test
  void directoryWithoutWritePermissionIsForbidden() throws Exception {
    assumeThat(System.getProperty("user.name")).as("root can write anywhere").isNotEqualTo("root");
    Path locked = Files.createDirectories(agent.workspace().resolve("locked"));
    Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("r-xr-xr-x"));

    assertStatus(createByQuery(locked.resolve("sub")), 403, "permission denied");
  }
}
