package dev.paddock.agent.git;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class GitChangesTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  @Test
  void reportsEveryKindOfChangeIncludingUntrackedFiles() throws Exception {
    TestRepo repo = TestRepo.init(agent.workspace().resolve("repo"), agent.scratch());
    repo.write("edit.txt", "1\n")
        .write("gone.txt", "bye\n")
        .write("old.txt", "content that is long enough for rename detection to pair it\n");
    repo.commitAll("base");
    repo.write("edit.txt", "2\n").delete("gone.txt").write("staged.txt", "s\n");
    repo.git("mv", "old.txt", "moved.txt");
    repo.git("add", "staged.txt");
    repo.write("fresh/untracked.txt", "u\n");

    HttpResponse<String> response = changes(repo.dir(), "");

    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(AgentFixture.jsonAny(response))
        .isEqualTo(
            List.of(
                change("UPDATED", "edit.txt"),
                change("ADDED", "fresh/untracked.txt"),
                change("DELETED", "gone.txt"),
                change("MOVED", "moved.txt"),
                change("ADDED", "staged.txt")));
  }

  @Test
  void changesAgainstAnOlderRefAndScopedToASubdirectory() throws Exception {
    TestRepo repo = TestRepo.init(agent.workspace().resolve("repo"), agent.scratch());
    repo.write("src/a.txt", "1\n").write("top.txt", "t\n");
    repo.commitAll("one");
    repo.write("src/a.txt", "2\n").write("top.txt", "t2\n");
    repo.commitAll("two");

    assertThat(AgentFixture.jsonAny(changes(repo.path("src"), "HEAD~1")))
        .isEqualTo(List.of(change("UPDATED", "a.txt")));
    assertThat(AgentFixture.jsonAny(changes(repo.dir(), ""))).isEqualTo(List.of());
  }

  @Test
  void emptyRepositoryAndOrphanBranchReportEverythingAsAdded() throws Exception {
    TestRepo repo = TestRepo.init(agent.workspace().resolve("new"), agent.scratch());
    repo.write("a.txt", "a\n").write("b.txt", "b\n");
    repo.git("add", "a.txt");

    HttpResponse<String> empty = changes(repo.dir(), "HEAD");
    repo.commitAll("first");
    repo.git("checkout", "-q", "--orphan", "other");
    HttpResponse<String> orphan = changes(repo.dir(), "");

    List<Object> allAdded = List.of(change("ADDED", "a.txt"), change("ADDED", "b.txt"));
    assertThat(empty.statusCode()).as(empty.body()).isEqualTo(200);
    assertThat(AgentFixture.jsonAny(empty)).isEqualTo(allAdded);
    assertThat(AgentFixture.jsonAny(orphan)).isEqualTo(allAdded);
  }

  @Test
  void directoryOutsideAnyRepositoryHasNoChanges() throws Exception {
    Path plain = Files.createDirectories(agent.workspace().resolve("plain"));

    HttpResponse<String> response = changes(plain, "");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(AgentFixture.jsonAny(response)).isEqualTo(List.of());
  }

  @Test
  void unknownOrDashedRefIs400() throws Exception {
    TestRepo repo = TestRepo.init(agent.workspace().resolve("repo"), agent.scratch());
    repo.commitAll("base");

    HttpResponse<String> unknown = changes(repo.dir(), "nope");
    HttpResponse<String> dashed = changes(repo.dir(), "--output=x");

    assertThat(unknown.statusCode()).isEqualTo(400);
    assertThat(AgentFixture.json(unknown).get("detail").toString()).contains("'nope'");
    assertThat(dashed.statusCode()).isEqualTo(400);
    assertThat(Files.exists(repo.path("x"))).isFalse();
  }

  @Test
  void relativePathIs400AndMissingPathIs422() throws Exception {
    assertThat(agent.get("/api/git/changes?path=relative/dir").statusCode()).isEqualTo(400);
    assertThat(agent.get("/api/git/changes").statusCode()).isEqualTo(422);
    assertThat(agent.get("/api/git/changes?path=/tmp&reff=HEAD").statusCode()).isEqualTo(422);
  }

  private HttpResponse<String> changes(Path dir, String ref) throws Exception {
    String query = "path=" + encode(dir.toString()) + (ref.isEmpty() ? "" : "&ref=" + encode(ref));
    return agent.get("/api/git/changes?" + query);
  }

  private static Map<String, Object> change(String status, String path) {
    return Map.of("status", status, "path", path);
  }

  static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }
}
