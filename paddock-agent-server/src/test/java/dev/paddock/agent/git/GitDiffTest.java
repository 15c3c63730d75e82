package dev.paddock.agent.git;

import static dev.paddock.agent.git.GitChangesTest.encode;
import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class GitDiffTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  @Test
  void returnsWorkTreeAndCommittedText() throws Exception {
    TestRepo repo = TestRepo.init(agent.workspace().resolve("repo"), agent.scratch());
    repo.write("src/app.py", "print('v1')\n");
    repo.commitAll("base");
    repo.write("src/app.py", "print('v2')\n");

    HttpResponse<String> response = diff(repo.path("src/app.py"), "");

    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(AgentFixture.json(response))
        .isEqualTo(Map.of("modified", "print('v2')\n", "original", "print('v1')\n"));
  }

  @Test
  void newFileHasNoOriginalAndDeletedFileHasNoModified() throws Exception {
    TestRepo repo = TestRepo.init(agent.workspace().resolve("repo"), agent.scratch());
    repo.write("old/gone.txt", "was here\n");
    repo.commitAll("base");
    repo.write("new.txt", "fresh\n").delete("old/gone.txt");
    Files.delete(repo.path("old"));

    assertThat(AgentFixture.json(diff(repo.path("new.txt"), "")))
        .isEqualTo(nullable("fresh\n", null));
    assertThat(AgentFixture.json(diff(repo.path("old/gone.txt"), "")))
        .isEqualTo(nullable(null, "was here\n"));
  }

  @Test
  void refOrCommitSelectTheOriginal() throws Exception {
    TestRepo repo = TestRepo.init(agent.workspace().resolve("repo"), agent.scratch());
    repo.write("f.txt", "one\n");
    String first = repo.commitAll("one");
    repo.write("f.txt", "two\n");
    repo.commitAll("two");

    assertThat(AgentFixture.json(diff(repo.path("f.txt"), "&ref=HEAD~1")))
        .containsEntry("original", "one\n");
    assertThat(AgentFixture.json(diff(repo.path("f.txt"), "&commit=" + first.substring(0, 8))))
        .containsEntry("original", "one\n")
        .containsEntry("modified", "two\n");
  }

  @Test
  void fileInAnEmptyRepositoryHasNoOriginal() throws Exception {
    TestRepo repo = TestRepo.init(agent.workspace().resolve("repo"), agent.scratch());
    repo.write("a.txt", "a\n");

    assertThat(AgentFixture.json(diff(repo.path("a.txt"), ""))).isEqualTo(nullable("a\n", null));
  }

  @Test
  void fileOutsideAnyRepositoryHasNeitherSide() throws Exception {
    Path file = Files.writeString(agent.workspace().resolve("loose.txt"), "x");

    assertThat(AgentFixture.json(diff(file, ""))).isEqualTo(nullable(null, null));
  }

  @Test
  void refWithCommitOrMalformedCommitOrUnknownRevisionIs400() throws Exception {
    TestRepo repo = TestRepo.init(agent.workspace().resolve("repo"), agent.scratch());
    repo.write("f.txt", "one\n");
    repo.commitAll("one");
    Path file = repo.path("f.txt");

    assertThat(diff(file, "&ref=HEAD&commit=abcd").statusCode()).isEqualTo(400);
    assertThat(diff(file, "&commit=xyz1").statusCode()).isEqualTo(400);
    assertThat(diff(file, "&commit=abc").statusCode()).isEqualTo(400);
    assertThat(diff(file, "&commit=" + "a".repeat(65)).statusCode()).isEqualTo(400);
    assertThat(diff(file, "&commit=deadbeef").statusCode()).isEqualTo(400);
    assertThat(diff(file, "&ref=-p").statusCode()).isEqualTo(400);
    assertThat(agent.get("/api/git/diff?path=f.txt").statusCode()).isEqualTo(400);
    assertThat(agent.get("/api/git/diff").statusCode()).isEqualTo(422);
  }

  private HttpResponse<String> diff(Path file, String extra) throws Exception {
    return agent.get("/api/git/diff?path=" + encode(file.toString()) + extra);
  }

  private static Map<String, Object> nullable(String modified, String original) {
    Map<String, Object> body = new HashMap<>();
    body.put("modified", modified);
    body.put("original", original);
    return body;
  }
}
