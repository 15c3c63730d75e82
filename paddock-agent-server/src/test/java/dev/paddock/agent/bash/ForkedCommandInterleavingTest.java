package dev.paddock.agent.bash;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.ChildProcesses;
import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.user.CommandUser;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Forked commands when the agent's own threads run late, as on a loaded machine: the load suite (50
 * sandboxes, 100 commands in flight on 2 cores) saw {@code echo} end with exit -1 and its full
 * output, or exit 0 and no output. Each test replays one such interleaving deterministically
 * through {@link ForkInterleaving}: it holds the late thread until the command's watcher has had
 * its chance to decide (or has decided), then lets it go. Real {@link BashService}, real zygote and
 * jobs; only the thread timing is the test's.
 */
class ForkedCommandInterleavingTest {
  private static final Duration LIMIT = Duration.ofSeconds(20);

  @TempDir Path root;

  private BashService service(ForkInterleaving interleaving) {
    return new BashService(
        AgentConfig.builder()
            .port(0)
            .workspace(root)
            .eventsDir(root.resolve("events"))
            .killGrace(Duration.ofMillis(500))
            .build(),
        CommandUser.agentItself(),
        Map.of(),
        () -> {},
        interleaving);
  }

  private static CommandRequest oneShot(String command) {
    return new CommandRequest(command, Optional.empty(), 30, Optional.empty(), false, Map.of());
  }

  @AfterEach
  void noProcessLeftBehind() {
    ChildProcesses.awaitNoneLeft();
  }

  /**
   * The job writes its {@code E} line and exits; the status reader reads the line only after the
   * watcher has found the job's process gone. That is a job that reported its status late, not one
   * killed before it could: the command ended 0 and said {@code hi}. (Before the status barrier the
   * watcher gave the line 50 ms and then reported exit -1, "killed before it reported a status".)
   */
  @Test
  void aStatusReadAfterTheJobIsGoneIsStillItsStatus() throws Exception {
    CompletableFuture<Void> releaseStatus = new CompletableFuture<>();
    CompletableFuture<Void> watcherSawItGone = new CompletableFuture<>();
    AtomicLong pid = new AtomicLong();
    AtomicInteger checksWhileGone = new AtomicInteger();
    ForkInterleaving lateStatus =
        new ForkInterleaving() {
          @Override
          public void beforeStatus(String line) {
            if (line.startsWith("S ")) {
              pid.set(Long.parseLong(line.split(" ")[2]));
            } else if (line.startsWith("E ")) {
              hold(releaseStatus);
            }
          }

          @Override
          public void watcherChecked(Optional<Duration> sinceStatus) {
            // Twice: the second check surely began after the process was gone.
            if (gone(pid.get()) && checksWhileGone.incrementAndGet() >= 2) {
              watcherSawItGone.complete(null);
            }
          }
        };
    try (BashService service = service(lateStatus)) {
      Output output = new Output();
      CommandRecord record = service.start(oneShot("echo hi"), Optional.of(output));
      try {
        CompletableFuture.anyOf(record.result, watcherSawItGone)
            .get(LIMIT.toSeconds(), TimeUnit.SECONDS);
      } finally {
        releaseStatus.complete(null);
      }
      CommandResult result = record.result.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
      assertThat(result.error()).as("error").isEmpty();
      assertThat(result.exitCode()).as("exit code").isZero();
      assertThat(output.stdout()).as("stdout").isEqualTo("hi\n");
    }
  }

  /**
   * The job prints, closes its output and reports its status; the thread that reads its stdout
   * connection runs only after the drain grace has passed. Its output is the command's own (it was
   * written before the status), so it must be read, not cut off as a background child's. (Before,
   * the watcher closed the connection unread and the command ended 0 with empty stdout.)
   */
  @Test
  void outputReadAfterTheDrainGraceIsStillTheCommands() throws Exception {
    CompletableFuture<Void> releaseOutput = new CompletableFuture<>();
    CompletableFuture<Void> graceOver = new CompletableFuture<>();
    AtomicInteger checksPastGrace = new AtomicInteger();
    ForkInterleaving lateOutput =
        new ForkInterleaving() {
          @Override
          public void beforeOutput(Channel channel) {
            if (channel == Channel.STDOUT) {
              hold(releaseOutput);
            }
          }

          @Override
          public void watcherChecked(Optional<Duration> sinceStatus) {
            if (sinceStatus.filter(d -> d.compareTo(ForkedCommand.DRAIN_GRACE) >= 0).isPresent()
                && checksPastGrace.incrementAndGet() >= 2) {
              graceOver.complete(null);
            }
          }
        };
    try (BashService service = service(lateOutput)) {
      Output output = new Output();
      CommandRecord record = service.start(oneShot("echo hi"), Optional.of(output));
      try {
        CompletableFuture.anyOf(record.result, graceOver).get(LIMIT.toSeconds(), TimeUnit.SECONDS);
      } finally {
        releaseOutput.complete(null);
      }
      CommandResult result = record.result.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
      assertThat(result.exitCode()).as("exit code").isZero();
      assertThat(output.stdout()).as("stdout").isEqualTo("hi\n");
    }
  }

  /**
   * What the drain grace is for is kept: a background child holding stdout open (and silent) does
   * not hold the command's end back; the command ends with its own output once the grace is over.
   */
  @Test
  void aSilentBackgroundChildHoldingStdoutDoesNotHoldTheEndBack() throws Exception {
    try (BashService service = service(ForkInterleaving.NONE)) {
      Output output = new Output();
      CommandRecord record =
          service.start(oneShot("sleep 60 & echo $!; echo done"), Optional.of(output));
      try {
        CommandResult result = record.result.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(result.exitCode()).as("exit code").isZero();
        assertThat(output.stdout()).as("stdout").endsWith("\ndone\n");
        // Cut once nothing is left unread, not at the 5 s limit kept for a child that writes on.
        assertThat(result.durationMillis()).as("ms until the end").isLessThan(4_000);
      } finally {
        output
            .stdout()
            .lines()
            .findFirst()
            .filter(l -> l.matches("\\d+"))
            .map(Long::parseLong)
            .flatMap(ProcessHandle::of)
            .ifPresent(ProcessHandle::destroyForcibly);
      }
    }
  }

  /**
   * A job whose whole group is killed writes no status; the watcher still ends it, once the status
   * barrier has shown no status line is on its way: 137 (the agent sent the KILL) and why.
   */
  @Test
  void aJobKilledOutrightEndsWithoutAStatusAndSaysWhy() throws Exception {
    try (BashService service = service(ForkInterleaving.NONE)) {
      Output output = new Output();
      CommandRecord record = service.start(oneShot("echo up; exec sleep 60"), Optional.of(output));
      output.firstLine.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
      record.control().orElseThrow().signal("KILL");
      CommandResult result = record.result.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
      assertThat(result.exitCode()).as("exit code").isEqualTo(137);
      assertThat(result.error())
          .hasValueSatisfying(e -> assertThat(e).contains("killed before it reported a status"));
      assertThat(output.stdout()).as("stdout").isEqualTo("up\n");
    }
  }

  private static boolean gone(long pid) {
    return pid > 0 && ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true);
  }

  /** Holds the calling thread until {@code release} (bounded, so a broken test cannot hang). */
  private static void hold(CompletableFuture<Void> release) {
    try {
      release.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("the test never released this thread", e);
    }
  }

  /** A live listener, as the streaming exec's: what a client of the stream would see. */
  private static final class Output implements OutputListener {
    private final StringBuilder stdout = new StringBuilder();
    final CompletableFuture<Void> firstLine = new CompletableFuture<>();

    @Override
    public synchronized void output(Channel channel, byte[] data, int offset, int length) {
      if (channel == Channel.STDOUT) {
        stdout.append(new String(data, offset, length, StandardCharsets.UTF_8));
        if (stdout.indexOf("\n") >= 0) {
          firstLine.complete(null);
        }
      }
    }

    @Override
    public void finished(CommandResult result) {}

    synchronized String stdout() {
      return stdout.toString();
    }
  }
}
