package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.paddock.agent.user.RunAs;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code --run-as 65534:65534} (nobody) with the agent running as root: every process started for
 * the user is that user, with no groups and no capabilities, cannot read what only root may, and
 * files the agent writes for it are its own. Needs root (CI runs as root).
 */
class RunAsTest {
  static final RunAs NOBODY = new RunAs(65534, 65534);

  @RegisterExtension final AgentFixture agent = new AgentFixture(b -> b.runAs(NOBODY));

  private final BashClient bash = new BashClient(agent);

  @BeforeAll
  static void needsRoot() {
    assumeThat(System.getProperty("user.name"))
        .as("switching to another user needs the agent (this JVM) to run as root")
        .isEqualTo("root");
  }

  @Test
  void oneShotCommandsRunAsTheUserWithoutGroupsOrCapabilities() throws Exception {
    Map<String, Object> result =
        bash.execute(
            "command", "id -u; id -g; id -G; grep -E '^Cap(Eff|Prm|Bnd):' /proc/self/status");

    assertThat(result).containsEntry("exit_code", 0);
    assertThat((String) result.get("stdout"))
        .startsWith("65534\n65534\n65534\n")
        .contains("CapPrm:\t0000000000000000", "CapEff:\t0000000000000000")
        .contains("CapBnd:\t0000000000000000");
  }

  @Test
  void sessionShellsRunAsTheUser() throws Exception {
    assertThat(bash.execute("command", "id -u; id -G", "session", "s"))
        .containsEntry("exit_code", 0)
        .containsEntry("stdout", "65534\n65534\n");
  }

  @Test
  void theWorkspaceAndHomeAreTheUsers() throws Exception {
    assertThat(owner(agent.workspace())).isEqualTo(65534);
    assertThat(bash.execute("command", "echo $HOME; touch made-here && stat -c %u made-here"))
        .containsEntry("exit_code", 0)
        .containsEntry("stdout", agent.workspace() + "\n65534\n");
  }

  @Test
  void aRootOnlyFileIsUnreadable() throws Exception {
    Path secret = Files.writeString(agent.workspace().resolve("secret"), "root only");
    Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));

    Map<String, Object> result = bash.execute("command", "cat secret");

    assertThat(result).containsEntry("exit_code", 1);
    assertThat((String) result.get("stderr")).contains("Permission denied");
    assertThat(result.get("stdout")).isNull();
  }

  @Test
  void theAgentsProcEntriesAreUnreadable() throws Exception {
    long agentPid = ProcessHandle.current().pid();
    String probe =
        "for f in environ mem maps; do"
            + " if exec 3</proc/"
            + agentPid
            + "/$f; then echo \"$f open\"; exec 3<&-; else echo \"$f denied\"; fi; done 2>/dev/null";

    Map<String, Object> result = bash.execute("command", probe);

    assertThat(result).containsEntry("stdout", "environ denied\nmem denied\nmaps denied\n");
  }

  @Test
  void uploadsAndCreatedDirectoriesBelongToTheUser() throws Exception {
    Path file = agent.workspace().resolve("new/deeper/file.txt");
    HttpResponse<String> uploaded = upload(file, "hello\n");
    Path dir = agent.workspace().resolve("made/by/api");
    HttpResponse<String> created =
        agent.postJson(
            "/api/file/create_directory", "{\"path\":" + AgentFixture.quote(dir + "") + "}");

    assertThat(uploaded.statusCode()).as(uploaded.body()).isEqualTo(200);
    assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
    for (Path p :
        List.of(file, file.getParent(), file.getParent().getParent(), dir, dir.getParent())) {
      assertThat(owner(p)).as("owner of %s", p).isEqualTo(65534);
      assertThat(group(p)).as("group of %s", p).isEqualTo(65534);
    }
    assertThat(
            bash.execute("command", "echo more >> new/deeper/file.txt && cat new/deeper/file.txt"))
        .containsEntry("stdout", "hello\nmore\n");
  }

  @Test
  void anUploadReplacingARootFileGivesItToTheUser() throws Exception {
    Path file = Files.writeString(agent.workspace().resolve("old.txt"), "old");

    HttpResponse<String> uploaded = upload(file, "new");

    assertThat(uploaded.statusCode()).as(uploaded.body()).isEqualTo(200);
    assertThat(owner(file)).isEqualTo(65534);
    assertThat(file).hasContent("new");
  }

  @Test
  void aTimedOutCommandTreeIsStillKilled() throws Exception {
    Map<String, Object> result =
        bash.execute("command", "(sleep 1000 &); sleep 1000 & echo started; wait", "timeout", 1);

    assertThat(result).containsEntry("timed_out", true).containsEntry("stdout", "started\n");
    Awaitility.await("the user's sleeps are gone")
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                ProcessHandle.allProcesses()
                    .filter(ProcessHandle::isAlive)
                    .noneMatch(
                        p ->
                            p.info().user().orElse("").equals("nobody")
                                && p.info().commandLine().orElse("").equals("sleep 1000")));
  }

  @Test
  void gitWorksOnTheUsersRepositoriesAndOnesRootMade() throws Exception {
    Map<String, Object> byUser =
        bash.execute(
            "command", "git init -q mine && cd mine && echo x > f && git status --porcelain");
    assertThat(byUser).containsEntry("exit_code", 0).containsEntry("stdout", "?? f\n");

    Path rootRepo = agent.workspace().resolve("theirs");
    Files.createDirectories(rootRepo);
    new ProcessBuilder("git", "init", "-q", rootRepo.toString()).inheritIO().start().waitFor();
    Files.writeString(rootRepo.resolve("untracked.txt"), "x");

    HttpResponse<String> changes = agent.get("/api/git/changes?path=" + encode(rootRepo));
    assertThat(changes.statusCode()).as(changes.body()).isEqualTo(200);
    assertThat(changes.body()).contains("untracked.txt");
    HttpResponse<String> delta =
        agent.get("/api/file/archive?format=git-delta&path=" + encode(rootRepo));
    assertThat(delta.statusCode()).as(delta.body()).isEqualTo(200);
    assertThat(delta.body()).contains("untracked.txt");
  }

  /** The fork server off: cold commands switch user too. */
  @Nested
  class ColdCommands {
    @RegisterExtension
    final AgentFixture cold = new AgentFixture(b -> b.runAs(NOBODY).forkServer(false));

    @Test
    void runAsTheUser() throws Exception {
      assertThat(new BashClient(cold).execute("command", "id -u; id -G"))
          .containsEntry("exit_code", 0)
          .containsEntry("stdout", "65534\n65534\n");
    }
  }

  private HttpResponse<String> upload(Path target, String content) throws Exception {
    String boundary = "run-as-test-boundary";
    String body =
        "--"
            + boundary
            + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n"
            + content
            + "\r\n--"
            + boundary
            + "--\r\n";
    return agent.send(
        agent
            .request("/api/file/upload?path=" + encode(target))
            .header("Content-Type", "multipart/form-data; boundary=" + boundary)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build());
  }

  private static String encode(Path path) {
    return URLEncoder.encode(path.toString(), StandardCharsets.UTF_8);
  }

  static int owner(Path path) throws Exception {
    return (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
  }

  static int group(Path path) throws Exception {
    return (Integer) Files.getAttribute(path, "unix:gid", LinkOption.NOFOLLOW_LINKS);
  }
}
