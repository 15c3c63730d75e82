package dev.paddock.agent.bash;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.paddock.agent.ChildProcesses;
import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.user.CommandUser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the long-lived zygote keeps per command it forks. It kept every finished job in its job
 * table, and each fork copies and frees that table: on the process backend an agent driven with
 * {@code true} by 8 clients fell from 508 to 216 commands/s over six 8 s rounds, while the zygote
 * grew by about 300 bytes per command. Real {@link BashService}, real zygote and jobs.
 */
class ForkServerRetentionTest {
  private static final int WARM_UP = 200;
  private static final int COMMANDS = 1500;

  /**
   * Far below what a job table entry per command costs (about 300 bytes: 444 KiB here before the
   * fix), far above the page or two an allocator may round up to.
   */
  private static final long MOST_GROWTH_KIB = 96;

  @TempDir Path root;

  @AfterEach
  void noProcessLeftBehind() {
    ChildProcesses.awaitNoneLeft();
  }

  @Test
  void theZygoteDoesNotGrowWithTheNumberOfCommandsItForked() throws Exception {
    assumeThat(Path.of("/proc/self/status")).as("needs Linux /proc").exists();
    try (BashService service = service()) {
      runTrue(service, WARM_UP);
      ProcessHandle zygote = zygote();
      long before = residentKib(zygote);
      runTrue(service, COMMANDS);
      long after = residentKib(zygote);
      assertThat(zygote.isAlive()).as("the same zygote forked every command").isTrue();
      assertThat(after - before)
          .as("zygote growth in KiB over %d commands (%d KiB before)", COMMANDS, before)
          .isLessThan(MOST_GROWTH_KIB);
    }
  }

  private BashService service() {
    return new BashService(
        AgentConfig.builder()
            .port(0)
            .workspace(root)
            .eventsDir(root.resolve("events"))
            .maxEvents(100)
            .killGrace(Duration.ofMillis(500))
            .build(),
        CommandUser.agentItself());
  }

  /** Runs {@code true} {@code count} times, one after another, each through the fork server. */
  private static void runTrue(BashService service, int count) throws Exception {
    CommandRequest request =
        new CommandRequest("true", Optional.empty(), 10, Optional.empty(), false, Map.of());
    for (int i = 0; i < count; i++) {
      CommandRecord record = service.start(request, Optional.empty());
      assertThat(record.result.get(10, TimeUnit.SECONDS).exitCode()).isZero();
    }
  }

  /** The zygote: this JVM's child running the fork server's script. */
  private static ProcessHandle zygote() {
    return ProcessHandle.current()
        .children()
        .filter(p -> p.info().commandLine().orElse("").contains("__paddock_job"))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no zygote among this JVM's children"));
  }

  private static long residentKib(ProcessHandle process) throws IOException {
    return Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status")).stream()
        .filter(line -> line.startsWith("VmRSS:"))
        .map(line -> Long.parseLong(line.replaceAll("[^0-9]", "")))
        .findFirst()
        .orElseThrow();
  }
}
