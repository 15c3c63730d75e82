package dev.paddock.agent.bash;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading the cgroup OOM kill counter from v1 and v2 files. */
class OomKillCounterTest {
  @TempDir Path dir;

  @Test
  void readsTheCountFromCgroupV2MemoryEvents() {
    String events = "low 0\nhigh 12\nmax 40\noom 3\noom_kill 2\noom_group_kill 0\n";

    assertThat(OomKillCounter.parse(events)).isEqualTo(OptionalLong.of(2));
  }

  @Test
  void readsTheCountFromCgroupV1OomControl() {
    String control = "oom_kill_disable 0\nunder_oom 0\noom_kill 17\n";

    assertThat(OomKillCounter.parse(control)).isEqualTo(OptionalLong.of(17));
  }

  @Test
  void hasNoCountWhenTheKernelKeepsNone() {
    // cgroup v1 before Linux 4.13: no oom_kill line; oom_kill_disable must not be taken for it.
    assertThat(OomKillCounter.parse("oom_kill_disable 0\nunder_oom 0\n")).isEmpty();
    assertThat(OomKillCounter.parse("")).isEmpty();
    assertThat(OomKillCounter.parse("oom_kill lots\n")).isEmpty();
    assertThat(OomKillCounter.parse("oom_kill -1\n")).isEmpty();
  }

  @Test
  void aMissingOrUnparsableFileReadsEmpty() throws Exception {
    Path file = dir.resolve("memory.events");
    OomKillCounter counter = OomKillCounter.at(file);
    assertThat(counter.read()).isEmpty();

    Files.writeString(file, "oom_kill 5\n");
    assertThat(counter.read()).isEqualTo(OptionalLong.of(5));

    Files.writeString(file, "garbage");
    assertThat(counter.read()).isEmpty();
  }
}
