package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A command's output, messages and environment are exactly what {@code bash -c '<command>'} gives:
 * nothing of the fork server's wrapper (its line numbers, its script, its variables) and nothing of
 * the cold path's launcher shows. Compared with a {@code bash -c} this test starts itself, and the
 * fork-server path with the cold path ({@code --no-fork-server}).
 */
class PlainBashFidelityTest {
  @RegisterExtension final AgentFixture forked = new AgentFixture();

  @RegisterExtension final AgentFixture cold = new AgentFixture(b -> b.forkServer(false));

  private final BashClient forkedBash = new BashClient(forked);
  private final BashClient coldBash = new BashClient(cold);

  /** Runs {@code script} with {@code bash -c} directly: stdout, stderr, exit code. */
  private static List<Object> plainBash(String script, Path cwd) throws Exception {
    Process process =
        new ProcessBuilder("bash", "-c", script)
            .directory(cwd.toFile())
            .redirectInput(new File("/dev/null"))
            .start();
    CompletableFuture<byte[]> err =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return process.getErrorStream().readAllBytes();
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            });
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return List.of(
        out, new String(err.get(), StandardCharsets.UTF_8), (Object) process.exitValue());
  }

  private static List<Object> outcome(Map<String, Object> result) {
    return List.of(
        String.valueOf(result.getOrDefault("stdout", "null")).replace("null", ""),
        result.get("stderr") == null ? "" : result.get("stderr"),
        result.get("exit_code"));
  }

  private List<Object> both(String script, Path cwd) throws Exception {
    List<Object> viaFork = outcome(forkedBash.execute("command", script, "cwd", cwd.toString()));
    List<Object> viaCold = outcome(coldBash.execute("command", script, "cwd", cwd.toString()));
    assertThat(viaCold).as("cold path").isEqualTo(viaFork);
    return viaFork;
  }

  @Test
  void errorMessagesCarryBashsNameAndTheCommandsOwnLineNumbers() throws Exception {
    Path dir = forked.scratch();
    String script =
        "echo start\nno_such_command_x1\necho \"$0 $LINENO $#\"\n(exit 7)\nno_such_command_x2 arg";
    List<Object> expected = plainBash(script, dir);
    assertThat((String) expected.get(1)).contains("bash: line 2: no_such_command_x1");
    assertThat(both(script, dir)).isEqualTo(expected);
  }

  @Test
  void aSyntaxErrorReadsAsBashWouldReportIt() throws Exception {
    Path dir = forked.scratch();
    String script = "echo a\nif then fi";
    List<Object> expected = plainBash(script, dir);
    assertThat(expected.get(2)).isEqualTo(2);
    assertThat(both(script, dir)).isEqualTo(expected);
  }

  @Test
  void aKilledCommandLeavesNothingOfTheWrapperInStderr() throws Exception {
    Path dir = forked.scratch();
    for (String script : List.of("echo before; kill -KILL $$", "echo before; kill -TERM $$")) {
      List<Object> expected = plainBash(script, dir);
      assertThat(expected.get(1)).isEqualTo("");
      assertThat(both(script, dir)).as(script).isEqualTo(expected);
    }
  }

  @Test
  void aCommandKilledFromOutsideLeavesNothingOfTheWrapperInStderr() throws Exception {
    String id = forkedBash.start("command", "echo started; sleep 600; echo never");
    org.awaitility.Awaitility.await("the command started")
        .atMost(java.time.Duration.ofSeconds(10))
        .until(() -> forked.get("/api/bash/commands/" + id).body().contains("\"running\":true"));
    // Once its first line is out, the script is past its start.
    org.awaitility.Awaitility.await("first output")
        .atMost(java.time.Duration.ofSeconds(10))
        .until(() -> !forkedBash.outputsAfter(id, -1).isEmpty());
    assertThat(
            forked
                .postJson("/api/bash/commands/" + id + "/signal", BashClient.body("signal", "KILL"))
                .statusCode())
        .isEqualTo(200);
    BashClient.Polled polled = forkedBash.await(id, java.time.Duration.ofSeconds(20));
    assertThat(polled.stdout.toString()).isEqualTo("started\n");
    assertThat(polled.stderr.toString()).isEmpty();
    assertThat(polled.exitCode()).isEqualTo(137);
  }

  @Test
  void theCommandSeesItsOwnScriptAndNoneOfTheWrappers() throws Exception {
    Path dir = forked.scratch();
    String script = "echo \"$BASH_EXECUTION_STRING\"; declare -p | grep -c _[_]paddock; declare -F";
    List<Object> viaFork = both(script, dir);
    assertThat(viaFork.get(0)).isEqualTo(script + "\n0\n");
  }

  /**
   * The agent runs in this JVM, so its commands get this JVM's environment less the keys plus
   * {@code PADDOCK_SANDBOX=1}: the same as a {@code bash -c} started here, in every variable.
   */
  @Test
  void variablesAndSignalStateAreThoseOfPlainBashInAnyDirectory() throws Exception {
    String script =
        "env | grep -v -e ^PADDOCK_SANDBOX= -e ^PADDOCK_AGENT_URL= | sort; echo ---;"
            + " declare -p | grep -v -e ' PPID=' -e ' PADDOCK_SANDBOX=' -e ' PADDOCK_AGENT_URL=' | sort; echo ---;"
            + " grep -e SigIgn -e SigBlk -e SigCgt /proc/self/status; echo \"$- $0 $SHLVL\";"
            + " ulimit -a; umask; pwd; pwd -P";
    for (Path dir : List.of(forked.workspace(), forked.scratch())) {
      List<Object> expected = plainBash(script, dir);
      assertThat(outcome(forkedBash.execute("command", script, "cwd", dir.toString())))
          .as("fork server in %s", dir)
          .isEqualTo(expected);
      // The cold agent's workspace is another directory; compare it where both can run.
      if (!dir.equals(forked.workspace())) {
        assertThat(outcome(coldBash.execute("command", script, "cwd", dir.toString())))
            .as("cold path in %s", dir)
            .isEqualTo(expected);
      }
    }
    List<Object> inWorkspace = plainBash(script, forked.workspace());
    assertThat(outcome(forkedBash.execute("command", script)))
        .as("fork server, no cwd")
        .isEqualTo(inWorkspace);
  }
}
