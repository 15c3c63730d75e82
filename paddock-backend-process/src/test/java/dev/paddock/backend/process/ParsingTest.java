package dev.paddock.backend.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The small parsers: settings words, /proc stat lines, the agent's ready line, durations. */
class ParsingTest {
  @Test
  void commandLineSplitsLikeAShellWithoutExpanding() {
    assertThat(CommandLine.split("  java -cp 'a b.jar:$HOME' \"x \\\"y\\\"\" c\\ d  "))
        .containsExactly("java", "-cp", "a b.jar:$HOME", "x \"y\"", "c d");
    assertThat(CommandLine.split("bash -c 'exit 3'")).containsExactly("bash", "-c", "exit 3");
    assertThat(CommandLine.split("''")).containsExactly("");
    assertThatIllegalArgumentException().isThrownBy(() -> CommandLine.split("a 'b"));
  }

  @Test
  void statLineIsReadAfterTheLastParenthesisOfTheCommandName() {
    String line =
        "4242 (we ird) (name)) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1000"
            + " 100 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";

    ProcStat stat = ProcStat.parse(line);

    assertThat(stat).isEqualTo(new ProcStat(4242, 'S', 17, 987654));
    assertThat(stat.alive()).isTrue();
    assertThat(new ProcStat(1, 'Z', 0, 0).alive()).isFalse();
    assertThat(new ProcStat(1, 'T', 0, 0).stopped()).isTrue();
  }

  @Test
  void ownStatMatchesTheJdksView() {
    long pid = ProcessHandle.current().pid();
    assertThat(ProcFs.system().stat(pid))
        .get()
        .extracting(ProcStat::ppid)
        .isEqualTo(ProcessHandle.current().parent().orElseThrow().pid());
    assertThat(ProcFs.system().stat(Long.MAX_VALUE)).isEmpty();
  }

  @Test
  void readyLineCarriesThePort() {
    assertThat(
            AgentOutput.readyPort(
                "paddock agent-server listening on http://127.0.0.1:41234 (workspace /w)"))
        .contains(41234);
    assertThat(AgentOutput.readyPort("paddock agent-server listening on http://127.0.0.1:80"))
        .contains(80);
    assertThat(AgentOutput.readyPort("WARNING listening on http://127.0.0.1:1")).isEmpty();
  }

  @Test
  void settingsAreTypedAndErrorsNameTheSetting() {
    ProcessSettings parsed =
        ProcessSettings.from(
            Map.of(
                "process.ready-timeout", "500ms",
                "process.stop-grace", "2m",
                "process.log-max-bytes", "2k",
                "process.memory", "256m",
                "process.pids-limit", "300"));
    assertThat(parsed.readyTimeout()).isEqualTo(Duration.ofMillis(500));
    assertThat(parsed.stopGrace()).isEqualTo(Duration.ofMinutes(2));
    assertThat(parsed.logMaxBytes()).isEqualTo(2048);
    assertThat(parsed.specResources().memoryBytes()).hasValue(256L << 20);
    assertThat(parsed.specResources().pids()).hasValue(300);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> ProcessSettings.from(Map.of("process.log-max-bytes", "lots")))
        .withMessageContaining("process.log-max-bytes='lots'")
        .withMessageContaining("512m");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> ProcessSettings.from(Map.of("process.freezer", "ice")))
        .withMessageContaining("process.freezer='ice'")
        .withMessageContaining("cgroup-v1");
  }

  @Test
  void sandboxIdsMustBePlainNames() {
    java.nio.file.Path dir = java.nio.file.Path.of("/data/sandboxes");
    assertThat(SandboxLayout.of(dir, "sb-1.a_b").root()).isEqualTo(dir.resolve("sb-1.a_b"));
    for (String bad : new String[] {"..", "a/b", "", ".hidden", "a..b", "x y"}) {
      assertThatIllegalArgumentException().isThrownBy(() -> SandboxLayout.of(dir, bad));
    }
  }
}
