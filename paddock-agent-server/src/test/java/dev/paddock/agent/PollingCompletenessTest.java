package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * OpenHands' pollers read a command's output from its events: they must get all of it, in whole
 * characters, and be told in band when the history could not keep it.
 */
class PollingCompletenessTest {
  private static final int MIB = 1 << 20;

  @RegisterExtension final AgentFixture agent = new AgentFixture();

  @RegisterExtension
  final AgentFixture smallHistory =
      new AgentFixture(b -> b.outputCapBytes(50_000).maxSpoolBytes(200_000));

  private final BashClient bash = new BashClient(agent);

  @Test
  void outputPastTheReplyCapArrivesWholeThroughTheEvents() throws Exception {
    int size = 12 * MIB;
    String id = bash.start("command", "head -c " + size + " /dev/zero | tr '\\0' y");
    BashClient.Polled polled = bash.await(id, Duration.ofSeconds(60));
    assertThat(polled.stdout.length()).isEqualTo(size);
    assertThat(polled.stdout.chars().allMatch(c -> c == 'y')).isTrue();
    assertThat(polled.exitCode()).isZero();
    assertThat(polled.last()).containsEntry("stdout_truncated", false);

    // The single reply keeps its 10 MiB cap, and says so.
    Map<String, Object> reply =
        bash.execute("command", "head -c " + size + " /dev/zero | tr '\\0' y");
    assertThat((String) reply.get("stdout")).hasSize(10 * MIB);
    assertThat(reply).containsEntry("stdout_truncated", true).containsEntry("exit_code", 0);
  }

  @Test
  void megabyteChunksNeverSplitACharacter() throws Exception {
    int chars = 733_333; // 2.2 MB of the 3-byte '€': no 1 MiB boundary falls between characters
    String id =
        bash.start(
            "command", "yes € | tr -d '\\n' | head -c " + chars * 3 + " > out.txt; cat out.txt");
    BashClient.Polled polled = bash.await(id, Duration.ofSeconds(60));
    assertThat(polled.stdout.toString()).isEqualTo("€".repeat(chars));
    int largest = 0;
    for (Map<String, Object> event : polled.events) {
      String text = (String) event.get("stdout");
      if (text == null) {
        continue;
      }
      int bytes = text.getBytes(StandardCharsets.UTF_8).length;
      assertThat(text).doesNotContain("\uFFFD");
      assertThat(bytes).isLessThanOrEqualTo(MIB);
      largest = Math.max(largest, bytes);
    }
    // The size cut itself was exercised, not just the 100 ms one.
    assertThat(largest).isGreaterThan(MIB - 3);
  }

  @Test
  void outputPastTheHistoryLimitEndsWithASignInStderr() throws Exception {
    BashClient small = new BashClient(smallHistory);
    String id = small.start("command", "head -c 300000 /dev/zero | tr '\\0' z; echo done >&2");
    BashClient.Polled polled = small.await(id, Duration.ofSeconds(30));
    assertThat(polled.stdout.length()).isEqualTo(100_000);
    assertThat(polled.stderr.toString())
        .startsWith("done\n")
        .contains("paddock: stdout cut at 100000 bytes (the agent's output history limit)");
    assertThat(polled.last()).containsEntry("stdout_truncated", true);
  }
}
