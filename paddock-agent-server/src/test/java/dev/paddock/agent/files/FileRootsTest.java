package dev.paddock.agent.files;

import static dev.paddock.agent.files.UploadDownloadTest.assertStatus;
import static dev.paddock.agent.files.UploadDownloadTest.q;
import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** File routes confined to one root: traversal and links cannot reach outside it. */
class FileRootsTest {
  @TempDir static Path sandbox;

  @RegisterExtension
  final AgentFixture agent =
      new AgentFixture(b -> b.fileRoots(List.of(sandbox.resolve("allowed"))));

  private Path allowed;
  private Path outside;

  @BeforeEach
  void layout() throws Exception {
    allowed = Files.createDirectories(sandbox.resolve("allowed"));
    outside = Files.createDirectories(sandbox.resolve("outside"));
    Files.writeString(outside.resolve("secret.txt"), "top secret");
    Files.writeString(allowed.resolve("public.txt"), "hello");
    Files.deleteIfExists(allowed.resolve("escape"));
    Files.createSymbolicLink(allowed.resolve("escape"), outside);
  }

  private HttpResponse<String> upload(Path target) throws Exception {
    return agent.send(
        agent
            .request("/api/file/upload?path=" + q(target))
            .header("Content-Type", Multipart.CONTENT_TYPE)
            .POST(Multipart.of(new byte[] {1}))
            .build());
  }

  @Test
  void filesInsideTheRootAreServed() throws Exception {
    HttpResponse<String> response =
        agent.get("/api/file/download?path=" + q(allowed.resolve("public.txt")));

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("hello");
  }

  @Test
  void traversalIsNormalisedThenRefused() throws Exception {
    String traversal = allowed + "/../outside/secret.txt";

    assertStatus(
        agent.get("/api/file/download?path=" + q(traversal)), 403, "outside the allowed roots");
    assertStatus(upload(Path.of(allowed + "/../outside/new.txt")), 403, "outside");
    assertThat(outside.resolve("new.txt")).doesNotExist();
  }

  @Test
  void symbolicLinksOutOfTheRootAreRefused() throws Exception {
    assertStatus(
        agent.get("/api/file/download?path=" + q(allowed.resolve("escape/secret.txt"))),
        403,
        "outside");
    assertStatus(upload(allowed.resolve("escape/planted.txt")), 403, "outside");
    assertStatus(upload(allowed.resolve("escape/deeper/planted.txt")), 403, "outside");
    assertStatus(
        agent.send(
            agent
                .request("/api/file/create_directory?path=" + q(allowed.resolve("escape/made")))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build()),
        403,
        "outside");
    assertStatus(
        agent.get("/api/file/archive?format=tar.gz&path=" + q(allowed.resolve("escape"))),
        403,
        "outside");
    try (var listing = Files.list(outside)) {
      assertThat(listing).containsExactly(outside.resolve("secret.txt"));
    }
  }

  @Test
  void aDanglingLinkIsFollowedToWhereAWriteWouldLand() throws Exception {
    Path dangling = allowed.resolve("dangling");
    Files.deleteIfExists(dangling);
    Files.createSymbolicLink(dangling, outside.resolve("created-through-link.txt"));

    assertStatus(upload(dangling), 403, "outside");
    assertThat(outside.resolve("created-through-link.txt")).doesNotExist();
  }

  @Test
  void linksThatStayInsideTheRootWork() throws Exception {
    Path link = allowed.resolve("alias.txt");
    Files.deleteIfExists(link);
    Files.createSymbolicLink(link, allowed.resolve("public.txt"));

    HttpResponse<String> response = agent.get("/api/file/download?path=" + q(link));

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("hello");
    assertThat(response.headers().firstValue("Content-Disposition"))
        .hasValue("attachment; filename=\"alias.txt\"");
  }
}
