package dev.paddock.agent.git;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GitCliTest {
  @TempDir Path temp;

  @Test
  void aGitThatHangsIsKilledWithItsChildrenAtTheTimeout() throws IOException {
    GitCli cli = new GitCli(script("sleep 30 & sleep 30"), Map.of("PATH", "/usr/bin:/bin"));

    assertThatThrownBy(
            () -> cli.run(GitCommand.in(temp, "status").withTimeout(Duration.ofMillis(300))))
        .isInstanceOf(GitFailure.class)
        .hasMessageContaining("git status timed out");
    assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)).isEmpty();
  }

  @Test
  void gitSeesTheFixedOptionsAndOnlyWhitelistedEnvironment() throws IOException {
    Map<String, String> env =
        GitCli.baseEnvironment(
            Map.of("PATH", "/usr/bin:/bin", "HOME", "/h", "SESSION_API_KEY", "secret"));
    GitCli cli = new GitCli(script("echo \"$@\"; env"), env);

    String out = cli.run(GitCommand.in(temp, "status", "--short")).text();

    assertThat(out)
        .startsWith("-c core.quotepath=off status --short")
        .contains("GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "HOME=/h")
        .doesNotContain("SESSION_API_KEY", "secret");
  }

  @Test
  void outputBeyondTheCapIsAFailureNotATruncation() throws IOException {
    GitCli cli = new GitCli(script("head -c 5000 /dev/zero"), Map.of("PATH", "/usr/bin:/bin"));

    assertThatThrownBy(() -> cli.run(GitCommand.in(temp, "cat-file").withMaxOutput(100)))
        .isInstanceOf(GitFailure.class)
        .hasMessageContaining("more than 100 bytes");
  }

  @Test
  void aMissingGitIsAFailureNamingTheCommand() {
    GitCli cli = new GitCli(temp.resolve("no-git").toString(), Map.of());

    assertThatThrownBy(() -> cli.run(GitCommand.in(temp, "diff")))
        .isInstanceOf(GitFailure.class)
        .hasMessageContaining("cannot run git diff");
  }

  private String script(String body) throws IOException {
    Path file = temp.resolve("fake-git");
    Files.writeString(file, "#!/bin/sh\n" + body + "\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
    return file.toString();
  }
}
