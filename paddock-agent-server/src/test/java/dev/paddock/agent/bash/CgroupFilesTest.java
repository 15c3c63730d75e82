package dev.paddock.agent.bash;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Finding the memory cgroup's OOM counter file on hosts and in containers, v1 and v2. */
class CgroupFilesTest {
  private static final String V1_MOUNTS_AT_ROOT =
      String.join(
          "\n",
          "23 1 0:21 / / rw - overlay overlay rw",
          "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
          "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
          "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
          "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw");

  @Test
  void hybridHostPrefersTheV1MemoryControllerUnderItsPath() {
    String cgroups = "4:memory:/process_api/70bd\n1:cpu:/\n0::/\n";

    assertThat(CgroupFiles.oomCounterCandidates(cgroups, V1_MOUNTS_AT_ROOT))
        .first()
        .isEqualTo(Path.of("/sys/fs/cgroup/memory/process_api/70bd/memory.oom_control"));
    assertThat(CgroupFiles.oomCounterCandidates(cgroups, V1_MOUNTS_AT_ROOT))
        .containsSubsequence(
            Path.of("/sys/fs/cgroup/memory/process_api/70bd/memory.oom_control"),
            Path.of("/sys/fs/cgroup/memory/memory.oom_control"),
            Path.of("/sys/fs/cgroup/unified/memory.events"));
  }

  @Test
  void v1ContainerWithoutACgroupNamespaceSeesItsCgroupAsTheMountRoot() {
    String cgroups = "9:memory:/docker/abc123\n0::/system.slice/containerd.service\n";
    String mounts =
        "40 31 0:35 /docker/abc123 /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory";

    assertThat(CgroupFiles.oomCounterCandidates(cgroups, mounts))
        .first()
        .isEqualTo(Path.of("/sys/fs/cgroup/memory/memory.oom_control"));
  }

  @Test
  void aPathMountinfoDoesNotExplainFallsBackToTheControllersMountPoint() {
    // Some runtimes show the host path in /proc/self/cgroup but mount the container's own cgroup.
    String cgroups = "9:memory:/kubepods/pod1/ctr\n";
    String mounts = "40 31 0:35 / /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory";

    assertThat(CgroupFiles.oomCounterCandidates(cgroups, mounts))
        .containsExactly(
            Path.of("/sys/fs/cgroup/memory/kubepods/pod1/ctr/memory.oom_control"),
            Path.of("/sys/fs/cgroup/memory/memory.oom_control"));
  }

  @Test
  void v2ContainerWithItsOwnNamespaceReadsTheMountRoot() {
    String mounts = "30 23 0:26 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw,nsdelegate";

    assertThat(CgroupFiles.oomCounterCandidates("0::/\n", mounts))
        .containsExactly(Path.of("/sys/fs/cgroup/memory.events"));
  }

  @Test
  void v2HostReadsTheProcessesCgroup() {
    String mounts = "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate";

    assertThat(
            CgroupFiles.oomCounterCandidates(
                "0::/user.slice/user-1000.slice/session-2.scope\n", mounts))
        .first()
        .isEqualTo(
            Path.of("/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope/memory.events"));
  }

  @Test
  void withoutMountinfoTheUsualPlacesAreTried() {
    assertThat(CgroupFiles.oomCounterCandidates("0::/sandbox\n", ""))
        .containsExactly(
            Path.of("/sys/fs/cgroup/sandbox/memory.events"),
            Path.of("/sys/fs/cgroup/memory.events"));
  }

  @Test
  void escapedMountPointsAreDecoded() {
    String mounts = "30 23 0:26 / /sys/fs/my\\040cgroup rw - cgroup2 cgroup2 rw";

    assertThat(CgroupFiles.oomCounterCandidates("0::/\n", mounts))
        .containsExactly(Path.of("/sys/fs/my cgroup/memory.events"));
  }
}
