package dev.paddock.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Inspect documents as dockerd 20.10 writes them, read into {@link ContainerState}. */
class ContainerStateTest {
  private static Map<String, Object> killed() {
    return Map.of(
        "Id", "abc123",
        "Created", "2026-12-01T10:00:00.123456789Z",
        "State",
            Map.of(
                "Status", "exited",
                "ExitCode", 137,
                "OOMKilled", false,
                "Error", "",
                "StartedAt", "2026-12-01T10:00:01.5Z",
                "FinishedAt", "2026-12-01T10:05:00Z"),
        "Config", Map.of("Labels", Map.of("paddock.sandbox-id", "sb-1", "paddock.managed", "true")),
        "HostConfig", Map.of("NetworkMode", "host", "Runtime", "runsc"),
        "Mounts",
            List.of(
                Map.of("Type", "bind", "Source", "/b", "Destination", "/opt/paddock"),
                Map.of(
                    "Type", "volume",
                    "Name", "paddock-sb-1-workspace",
                    "Destination", "/workspace")));
  }

  @Test
  void aKilledContainerReportsItsSignalAndThatItRan() {
    ContainerState state = ContainerState.parse(killed());

    assertThat(state.stopped()).isTrue();
    assertThat(state.alive()).isFalse();
    assertThat(state.signal()).hasValue(9);
    assertThat(state.exitSummary()).isEqualTo("exit code 137, signal 9 (SIGKILL)");
    assertThat(state.startedAt()).contains(Instant.parse("2026-12-01T10:00:01.5Z"));
    assertThat(state.label("paddock.sandbox-id")).contains("sb-1");
    assertThat(state.volumes()).containsExactly(Map.entry("/workspace", "paddock-sb-1-workspace"));
    assertThat(state.hostNetwork()).isTrue();
    assertThat(state.runtime()).isEqualTo("runsc");
  }

  @Test
  void anOomKillIsSaidSoAndAPlainExitHasNoSignal() {
    ContainerState oom =
        ContainerState.parse(
            Map.of(
                "Id",
                "x",
                "State",
                Map.of("Status", "exited", "ExitCode", 137, "OOMKilled", true)));
    ContainerState plain =
        ContainerState.parse(Map.of("Id", "y", "State", Map.of("Status", "exited", "ExitCode", 3)));

    assertThat(oom.exitSummary()).contains("too much memory");
    assertThat(plain.signal()).isEmpty();
    assertThat(plain.exitSummary()).isEqualTo("exit code 3");
  }

  @Test
  void aContainerThatNeverRanHasNoStartTimeAndIsNotStopped() {
    ContainerState created =
        ContainerState.parse(
            Map.of(
                "Id",
                "z",
                "State",
                Map.of(
                    "Status", "created",
                    "StartedAt", "0001-01-01T00:00:00Z",
                    "FinishedAt", "0001-01-01T00:00:00Z")));

    assertThat(created.startedAt()).isEmpty();
    assertThat(created.finishedAt()).isEmpty();
    assertThat(created.stopped()).isFalse();
    assertThat(created.labels()).isEmpty();
  }
}
