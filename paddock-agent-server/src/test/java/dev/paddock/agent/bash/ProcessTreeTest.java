package dev.paddock.agent.bash;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Finding a process group's members without starting a process: what the agent falls back to when
 * the sandbox's pids limit leaves no room for {@code kill(1)} (a fork bomb).
 */
class ProcessTreeTest {
  @Test
  void groupMembersAreReadFromProcAndCanBeKilledWithoutAFork() throws Exception {
    // setsid makes bash the leader of a new group; its two sleeps join that group.
    Process leader =
        new ProcessBuilder("setsid", "bash", "-c", "sleep 300 & sleep 300 & wait")
            .redirectErrorStream(true)
            .start();
    try {
      long group = leader.pid();
      Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> ProcessTree.groupMembers(group).size() == 3);
      List<ProcessHandle> members = ProcessTree.groupMembers(group);
      assertThat(members).extracting(ProcessHandle::pid).contains(leader.pid());
      assertThat(ProcessTree.groupMembers(ProcessHandle.current().pid())).isEmpty();

      members.forEach(ProcessHandle::destroyForcibly);

      Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> ProcessTree.groupMembers(group).isEmpty());
    } finally {
      leader.descendants().forEach(ProcessHandle::destroyForcibly);
      leader.destroyForcibly().waitFor();
    }
  }

  @Test
  void aGroupWhoseLeaderExitedIsStillTerminated() throws Exception {
    // The leader starts two members of its new group and exits at once: the group lives on.
    Process leader =
        new ProcessBuilder("setsid", "bash", "-c", "sleep 300 & sleep 300 & exit 0")
            .redirectErrorStream(true)
            .start();
    long group = leader.pid();
    try {
      leader.waitFor();
      Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> ProcessTree.groupMembers(group).size() == 2);

      ProcessTree.terminateGroup(group, Duration.ofSeconds(2));

      Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> ProcessTree.groupMembers(group).isEmpty());
    } finally {
      ProcessTree.groupMembers(group).forEach(ProcessHandle::destroyForcibly);
    }
  }
}
