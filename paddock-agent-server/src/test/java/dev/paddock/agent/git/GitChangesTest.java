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

    // A directory inside a repository stands for the whole repository (OpenHands' meaning).
    assertThat(AgentFixture.jsonAny(changes(repo.path("src"), "HEAD~1")))
        .isEqualTo(List.of(change("UPDATED", "src/a.txt"), change("UPDATED", "top.txt")));
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
  void aWorkspaceOfClonesReportsEachRepositoryUnderItsDirectory() throws Exception {
    Path workspace = agent.workspace();
    TestRepo api = TestRepo.init(workspace.resolve("api"), agent.scratch());
    api.write("main.py", "print(1)\n").commitAll("base");
    api.write("main.py", "print(2)\n").write("new file ü.txt", "n\n");
    TestRepo web = TestRepo.init(workspace.resolve("web"), agent.scratch());
    web.write("index.html", "<p>\n").commitAll("base");
    web.delete("index.html");
    TestRepo.init(workspace.resolve("clean"), agent.scratch()).commitAll("nothing");
    Files.writeString(workspace.resolve("notes.txt"), "not in any repository\n");

    assertThat(AgentFixture.jsonAny(changes(workspace, "")))
        .isEqualTo(
            List.of(
                change("UPDATED", "api/main.py"),
                change("ADDED", "api/new file ü.txt"),
                change("DELETED", "web/index.html")));
  }

  @Test
  void aRepositoryHoldingClonesReportsThemApartFromItsOwnChanges() throws Exception {
    TestRepo outer = TestRepo.init(agent.workspace(), agent.scratch());
    outer.write("README.md", "r\n").commitAll("base");
    outer.write("README.md", "r2\n");
    TestRepo inner = TestRepo.init(agent.workspace().resolve("vendor-clone"), agent.scratch());
    inner.write("lib.c", "int x;\n").commitAll("base");
    inner.write("lib.c", "int y;\n");

    assertThat(AgentFixture.jsonAny(changes(agent.workspace(), "")))
        .isEqualTo(
            List.of(change("UPDATED", "README.md"), change("UPDATED", "vendor-clone/lib.c")));
  }

  @Test
  void withoutARefCommittedButUnpushedWorkStaysVisible() throws Exception {
    Path origin = agent.scratch().resolve("origin.git");
    TestRepo seed = TestRepo.init(agent.scratch().resolve("seed"), agent.scratch());
    seed.write("app.txt", "v1\n").commitAll("base");
    TestRepo.run(
        agent.scratch(),
        TestRepo.isolatedEnv(agent.scratch()),
        "clone",
        "-q",
        "--bare",
        seed.dir().toString(),
        origin.toString());
    Path clonePath = agent.workspace().resolve("project");
    TestRepo.run(
        agent.scratch(),
        TestRepo.isolatedEnv(agent.scratch()),
        "clone",
        "-q",
        origin.toString(),
        clonePath.toString());
    TestRepo clone = TestRepo.at(clonePath, agent.scratch());

    clone.write("app.txt", "v2\n").commitAll("local work, not pushed");
    assertThat(AgentFixture.jsonAny(changes(clonePath, "")))
        .as("against the upstream")
        .isEqualTo(List.of(change("UPDATED", "app.txt")));
    assertThat(AgentFixture.jsonAny(changes(clonePath, "HEAD"))).isEqualTo(List.of());

    // A feature branch pushed to a branch of its own: its work is still shown, against the fork
    // point from the default branch.
    clone.git("checkout", "-q", "-b", "feature", "origin/main");
    clone.write("feature.txt", "f\n").commitAll("feature");
    clone.git("push", "-q", "-u", "origin", "feature");
    assertThat(AgentFixture.jsonAny(changes(clonePath, "")))
        .isEqualTo(List.of(change("ADDED", "feature.txt")));
    // git_diff compares with the same base, so the new file has no original.
    assertThat(AgentFixture.json(diff(clonePath.resolve("feature.txt"))))
        .containsEntry("modified", "f\n")
        .containsEntry("original", null);
    clone.write("app.txt", "v3\n");
    assertThat(AgentFixture.json(diff(clonePath.resolve("app.txt"))))
        .containsEntry("modified", "v3\n")
        .containsEntry("original", "v1\n");
  }

  @Test
  void aMissingPathHasNoChanges() throws Exception {
    HttpResponse<String> response = changes(agent.workspace().resolve("not-cloned-yet"), "");
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(AgentFixture.jsonAny(response)).isEqualTo(List.of());
  }

  @Test
  void aNulOrOverlongPathIs400WithoutEchoingIt() throws Exception {
    for (String route : List.of("/api/git/changes", "/api/git/diff")) {
      HttpResponse<String> nul = agent.get(route + "?path=%00");
      assertThat(nul.statusCode()).as(nul.body()).isEqualTo(400);
      assertThat(agent.get(route + "?path=/tmp%00x").statusCode()).isEqualTo(400);
      // Past PATH_MAX the route refuses it; far past, the HTTP layer already does (414).
      HttpResponse<String> longPath = agent.get(route + "?path=/" + "a".repeat(5_000));
      assertThat(longPath.statusCode()).isEqualTo(400);
      assertThat(longPath.body()).hasSizeLessThan(1000).contains("5001 characters");
      HttpResponse<String> huge = agent.get(route + "?path=/" + "a".repeat(100_000));
      assertThat(huge.statusCode()).isIn(400, 414);
      assertThat(huge.body()).hasSizeLessThan(1000).contains("detail");
    }
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

  private HttpResponse<String> diff(Path file) throws Exception {
    return agent.get("/api/git/diff?path=" + encode(file.toString()));
  }

  static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }
}
