package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.backend.process.ProcessBackendProvider;
import dev.paddock.controlplane.CgroupRoots;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;

/**
 * {@link TwoReplicaContract} on the process backend: both replicas run on this host and share one
 * {@code process.sandboxes-dir} (each keeps its own data dir), so either finds, freezes and stops
 * the agents the other started through their markers. Leak check: no live process whose command
 * line names the shared directory, no new {@code sb-*} cgroup, and the directory empty.
 */
class ProcessTwoReplicaTest extends TwoReplicaContract {
  private Path sandboxes;
  private Set<Path> cgroupsBefore;

  @BeforeEach
  void createSharedDirectory() throws IOException {
    sandboxes = Files.createTempDirectory("paddock-replica-sandboxes-");
    cgroupsBefore = sandboxCgroups();
  }

  @Override
  protected void removeBackendFiles() throws IOException {
    try (var paths = Files.walk(sandboxes)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  @Override
  protected Map<String, String> backendSettings() {
    return Map.of(
        "RUNTIME", "process",
        "process.sandboxes-dir", sandboxes.toString(),
        "agent.command", ProcessBackendProvider.classPathAgentCommand(),
        "process.stop-grace", "3s",
        "process.ready-timeout", "20s");
  }

  @Override
  protected long agentPid(String sandboxId) throws IOException {
    Path marker = sandboxes.resolve(sandboxId).resolve("paddock.json");
    Map<String, Object> json = JSON.std.mapFrom(Files.readString(marker));
    return Long.parseLong(String.valueOf(json.get("pid")));
  }

  @Override
  protected void assertNothingLeaked() throws Exception {
    Awaitility.await("every agent of the test gone")
        .atMost(Duration.ofSeconds(15))
        .until(() -> agents().isEmpty());
    Set<Path> cgroups = sandboxCgroups();
    cgroups.removeAll(cgroupsBefore);
    assertThat(cgroups).as("cgroups left behind").isEmpty();
    // A start killed between making its directory and writing its marker leaves a directory the
    // survivor's listing removes once the ready timeout (20 s here) passed: bounded, not leaked.
    Awaitility.await("every sandbox directory gone")
        .atMost(Duration.ofSeconds(40))
        .untilAsserted(
            () -> {
              try (var left = Files.list(sandboxes)) {
                assertThat(left.toList()).as("sandbox directories left behind").isEmpty();
              }
            });
  }

  /** Pids of live processes whose command line names the shared sandboxes directory. */
  private List<Long> agents() throws IOException {
    List<Long> pids = new ArrayList<>();
    try (var procs = Files.list(Path.of("/proc"))) {
      for (Path proc : procs.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
        try {
          String cmdline = Files.readString(proc.resolve("cmdline"), StandardCharsets.ISO_8859_1);
          if (cmdline.contains(sandboxes.toString())) {
            pids.add(Long.parseLong(proc.getFileName().toString()));
          }
        } catch (IOException e) {
          // Gone meanwhile, or not ours to read.
        }
      }
    }
    return pids;
  }

  private static Set<Path> sandboxCgroups() throws IOException {
    Set<Path> found = new HashSet<>();
    for (Path root : CgroupRoots.all()) {
      if (Files.isDirectory(root)) {
        try (var dirs = Files.list(root)) {
          dirs.filter(d -> d.getFileName().toString().startsWith("sb-")).forEach(found::add);
        }
      }
    }
    return found;
  }
}
