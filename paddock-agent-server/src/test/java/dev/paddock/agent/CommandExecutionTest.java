package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** One-shot commands: exit codes, output, working directory, timeouts and the output cap. */
class CommandExecutionTest {
  private static final int CAP = 64;

  @RegisterExtension final AgentFixture agent = new AgentFixture(b -> b.outputCapBytes(CAP));

  private final BashClient bash = new BashClient(agent);

  @Test
  void reportsTheExitCode() throws Exception {
    assertThat(bash.execute("command", "true")).containsEntry("exit_code", 0);
    assertThat(bash.execute("command", "exit 42")).containsEntry("exit_code", 42);
    assertThat(bash.execute("command", "no-such-program-xyz"))
        .containsEntry("exit_code", 127)
        .containsEntry("timed_out", false);
  }

  @Test
  void keepsStdoutAndStderrApart() throws Exception {
    Map<String, Object> result =
        bash.execute("command", "echo out1; echo err1 >&2; echo out2; echo err2 >&2");
    assertThat(result)
        .containsEntry("stdout", "out1\nout2\n")
        .containsEntry("stderr", "err1\nerr2\n")
        .containsEntry("stdout_truncated", false)
        .containsEntry("stderr_truncated", false);
  }

  @Test
  void runsInTheWorkspaceByDefault() throws Exception {
    assertThat(bash.execute("command", "pwd"))
        .containsEntry("stdout", agent.workspace().toRealPath() + "\n");
  }

  @Test
  void runsInAnAbsoluteCwd() throws Exception {
    Path dir = agent.scratch();
    assertThat(bash.execute("command", "pwd", "cwd", dir.toString()))
        .containsEntry("stdout", dir.toRealPath() + "\n");
  }

  @Test
  void resolvesARelativeCwdAgainstTheWorkspace() throws Exception {
    Path sub = Files.createDirectories(agent.workspace().resolve("a/b"));
    assertThat(bash.execute("command", "pwd", "cwd", "a/b"))
        .containsEntry("stdout", sub.toRealPath() + "\n");
  }

  /** OpenHands reports a command's own bad input in band: its clients drop an HTTP reason. */
  @Test
  void aMissingOrNonDirectoryCwdEndsTheCommandWithAnErrorInStderr() throws Exception {
    Files.writeString(agent.workspace().resolve("file.txt"), "x");
    for (String cwd : List.of("does/not/exist", "/no/such/dir", "file.txt")) {
      Map<String, Object> result = bash.execute("command", "pwd", "cwd", cwd);
      assertThat(result).as(cwd).containsEntry("exit_code", -1).containsEntry("stdout", null);
      // This agent caps replies at 64 bytes; the events below keep the whole line.
      assertThat((String) result.get("stderr"))
          .startsWith("Error executing command: cwd '" + cwd + "'");
      // The polling path sees the same: an accepted command whose one event ends it.
      String id = bash.start("command", "pwd", "cwd", cwd);
      BashClient.Polled polled = bash.await(id, Duration.ofSeconds(10));
      assertThat(polled.exitCode()).isEqualTo(-1);
      assertThat(polled.stderr.toString())
          .isEqualTo("Error executing command: cwd '" + cwd + "' is not an existing directory\n");
    }
  }

  @Test
  void dollarDollarIsTheCommandsOwnShellAndDiffersBetweenCommands() throws Exception {
    Map<String, Object> first = bash.execute("command", "echo $$ $BASHPID");
    Map<String, Object> second = bash.execute("command", "echo ${$}:$BASHPID");
    String[] a = ((String) first.get("stdout")).trim().split(" ");
    String[] b = ((String) second.get("stdout")).trim().split(":");
    assertThat(a[0]).as("$$ is the command's shell").isEqualTo(a[1]);
    assertThat(b[0]).isEqualTo(b[1]).isNotEqualTo(a[0]);
  }

  @Test
  void commandsSeeNoneOfTheForkServersVariablesFunctionsOrParameters() throws Exception {
    Map<String, Object> result =
        bash.execute(
            "command",
            "echo \"[$#][$1][$id][$tok][$dir][$in][$src][$__paddock_script][$__paddock_id]\";"
                + " declare -F | wc -l; case $- in *m*) echo monitor;; *) echo plain;; esac");
    assertThat(result)
        .containsEntry("exit_code", 0)
        .containsEntry("stdout", "[0][][][][][][][][]\n0\nplain\n");
  }

  @Test
  void timeoutKillsGrandchildrenAndBackgroundJobs() throws Exception {
    Map<String, Object> result =
        bash.execute(
            "command",
            "echo self:$$; sleep 1000 & echo bg:$!; (sleep 1000 & echo orphan:$!); sleep 1000",
            "timeout",
            1);
    assertThat(result).containsEntry("timed_out", true).containsEntry("exit_code", -1);
    List<Long> pids = pids((String) result.get("stdout"));
    assertThat(pids).as(result.get("stdout").toString()).hasSize(3);
    Awaitility.await("every process of the command gone")
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(pids).allMatch(BashClient::gone));
  }

  @Test
  void timeoutKillsACommandThatIgnoresSigterm() throws Exception {
    long started = System.nanoTime();
    Map<String, Object> result =
        bash.execute("command", "trap '' TERM; echo self:$$; sleep 1000; sleep 1000", "timeout", 1);
    long millis = Duration.ofNanos(System.nanoTime() - started).toMillis();
    assertThat(result).containsEntry("timed_out", true).containsEntry("exit_code", -1);
    assertThat(millis).as("killed after the 500 ms grace").isGreaterThanOrEqualTo(1400);
    List<Long> pids = pids((String) result.get("stdout"));
    Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> pids.stream().allMatch(BashClient::gone));
  }

  @Test
  void timeoutReportsOutputWrittenBeforeIt() throws Exception {
    Map<String, Object> result = bash.execute("command", "echo before; sleep 1000", "timeout", 1);
    assertThat(result).containsEntry("stdout", "before\n").containsEntry("timed_out", true);
  }

  @Test
  void outputPastTheCapIsCutAtExactlyTheCap() throws Exception {
    Map<String, Object> result =
        bash.execute("command", "head -c 10000 /dev/zero | tr '\\0' x; echo small >&2");
    assertThat((String) result.get("stdout")).isEqualTo("x".repeat(CAP));
    assertThat(result)
        .containsEntry("stdout_truncated", true)
        .containsEntry("stderr", "small\n")
        .containsEntry("stderr_truncated", false)
        .containsEntry("exit_code", 0);
  }

  @Test
  void outputOfExactlyTheCapIsNotTruncated() throws Exception {
    Map<String, Object> result =
        bash.execute("command", "head -c " + CAP + " /dev/zero | tr '\\0' y");
    assertThat((String) result.get("stdout")).isEqualTo("y".repeat(CAP));
    assertThat(result).containsEntry("stdout_truncated", false);
  }

  @Test
  void polledEventsKeepTheOutputTheReplyCapCuts() throws Exception {
    String id = bash.start("command", "head -c 10000 /dev/zero | tr '\\0' x");
    BashClient.Polled polled = bash.await(id, Duration.ofSeconds(10));
    assertThat(polled.stdout.toString()).isEqualTo("x".repeat(10000));
    assertThat(polled.last()).containsEntry("stdout_truncated", false);
  }

  @Test
  void concurrentCommandsEachGetOnlyTheirOwnOutput() throws Exception {
    int n = 8;
    ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
    try {
      List<Future<Map<String, Object>>> results = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        String command =
            "for j in 1 2 3 4 5; do echo c" + i + "-$j; echo e" + i + "-$j >&2; sleep 0.02; done";
        results.add(pool.submit(() -> bash.execute("command", command)));
      }
      for (int i = 0; i < n; i++) {
        Map<String, Object> result = results.get(i).get();
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        for (int j = 1; j <= 5; j++) {
          out.append("c").append(i).append('-').append(j).append('\n');
          err.append("e").append(i).append('-').append(j).append('\n');
        }
        assertThat(result)
            .containsEntry("stdout", out.toString())
            .containsEntry("stderr", err.toString());
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static List<Long> pids(String output) {
    List<Long> pids = new ArrayList<>();
    Matcher m = Pattern.compile("(?m)^\\w+:(\\d+)$").matcher(output);
    while (m.find()) {
      pids.add(Long.parseLong(m.group(1)));
    }
    return pids;
  }
}
