package dev.paddock.backend.ssh;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.controlplane.MarkedProcesses;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.awaitility.Awaitility;

/**
 * What the SSH backend may leave on the test host (which is this machine): sandbox directories,
 * agent or command processes working under the remote directory, any process of the machine Paddock
 * marked (by environment or cgroup) that was not there when this check was made (orphans reparented
 * to init included), per-sandbox cgroups, and ssh client processes of the control plane.
 */
final class HostLeaks {
  private static final List<Path> CGROUP_ROOTS =
      List.of(Path.of("/sys/fs/cgroup/paddock-ssh"), Path.of("/sys/fs/cgroup/freezer/paddock-ssh"));

  private final Path remoteDir;
  private final Set<Path> cgroupsBefore;
  private final Set<String> markedBefore = MarkedProcesses.snapshot();

  HostLeaks(Path remoteDir) {
    this.remoteDir = remoteDir;
    this.cgroupsBefore = cgroups();
  }

  void assertNone() throws IOException {
    Awaitility.await("no process left on the host or here")
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(
            () -> {
              assertThat(processesUnder(remoteDir)).as("host processes left behind").isEmpty();
              assertThat(sshClients()).as("ssh clients left behind").isEmpty();
              assertThat(MarkedProcesses.newSince(markedBefore))
                  .as("Paddock-marked processes left on the machine (orphans included)")
                  .isEmpty();
            });
    Set<Path> cgroups = cgroups();
    cgroups.removeAll(cgroupsBefore);
    assertThat(cgroups).as("cgroups left behind").isEmpty();
    Path sandboxes = remoteDir.resolve("sandboxes");
    if (Files.isDirectory(sandboxes)) {
      try (var left = Files.list(sandboxes)) {
        assertThat(left).as("sandbox directories left on the host").isEmpty();
      }
    }
  }

  /** The ssh client processes of this JVM (its sshd, also a child, is the test's). */
  static List<Long> sshClients() {
    return ProcessHandle.current()
        .descendants()
        .filter(ProcessHandle::isAlive)
        .filter(p -> p.info().command().map(c -> c.endsWith("/ssh")).orElse(false))
        .map(ProcessHandle::pid)
        .toList();
  }

  /** Processes whose command line or working directory lies under {@code dir}. */
  static List<Long> processesUnder(Path dir) {
    String prefix = dir.toString();
    List<Long> found = new ArrayList<>();
    ProcessHandle.allProcesses()
        .filter(ProcessHandle::isAlive)
        .forEach(
            p -> {
              String cmd = p.info().commandLine().orElse("");
              Path cwd = Path.of("/proc", Long.toString(p.pid()), "cwd");
              boolean inside = cmd.contains(prefix);
              try {
                inside |= Files.readSymbolicLink(cwd).toString().startsWith(prefix);
              } catch (IOException | UnsupportedOperationException e) {
                // Gone meanwhile, or not ours to read: its command line decided.
              }
              if (inside) {
                found.add(p.pid());
              }
            });
    return found;
  }

  private static Set<Path> cgroups() {
    Set<Path> found = new HashSet<>();
    for (Path root : CGROUP_ROOTS) {
      if (Files.isDirectory(root)) {
        try (var dirs = Files.list(root)) {
          dirs.filter(Files::isDirectory).forEach(found::add);
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }
    }
    return found;
  }
}
