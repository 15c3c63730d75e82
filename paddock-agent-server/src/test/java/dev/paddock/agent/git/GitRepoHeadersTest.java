package dev.paddock.agent.git;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.agent.user.CommandUser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class GitRepoHeadersTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  @Test
  void describesRemoteWithoutCredentialsBranchHeadAndRoot() throws Exception {
    TestRepo repo = TestRepo.init(agent.workspace().resolve("proj"), agent.scratch());
    repo.git("remote", "add", "origin", "https://bot:ghp_SECRET@github.example/acme/proj.git");
    repo.git("checkout", "-q", "-b", "feature/ü");
    String head = repo.commitAll("base");

    Map<String, String> headers =
        GitArchive.create(CommandUser.agentItself()).repoHeaders(repo.dir());

    assertThat(headers)
        .containsEntry("X-Archive-Repo-Remote", "https://***@github.example/acme/proj.git")
        .containsEntry("X-Archive-Branch", "feature/%C3%BC")
        .containsEntry("X-Archive-Head-Commit", head)
        .containsEntry(
            "X-Archive-Repo-Root", HeaderValues.percentEncode(repo.dir().toRealPath().toString()));
    assertThat(headers.toString()).doesNotContain("SECRET");
  }

  @Test
  void detachedHeadWithoutRemoteOmitsBranchAndRemote() throws Exception {
    TestRepo repo = TestRepo.init(agent.workspace().resolve("proj"), agent.scratch());
    String head = repo.commitAll("base");
    repo.git("checkout", "-q", "--detach");

    assertThat(GitArchive.create(CommandUser.agentItself()).repoHeaders(repo.dir()))
        .containsOnlyKeys("X-Archive-Head-Commit", "X-Archive-Repo-Root")
        .containsEntry("X-Archive-Head-Commit", head);
  }

  @Test
  void noRepositoryMeansNoHeaders() throws Exception {
    Path plain = Files.createDirectories(agent.workspace().resolve("plain"));

    assertThat(GitArchive.create(CommandUser.agentItself()).repoHeaders(plain)).isEmpty();
  }
}
