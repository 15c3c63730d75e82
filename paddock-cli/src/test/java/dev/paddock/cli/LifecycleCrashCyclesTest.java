package dev.paddock.cli;

/**
 * {@link LifecycleCrashCyclesContract} on the process backend: agents as processes of this machine,
 * frozen by the cgroup freezer (or signals), their workspaces under the data dir.
 */
class LifecycleCrashCyclesTest extends LifecycleCrashCyclesContract {
  LifecycleCrashCyclesTest() {
    super(ProcessCycleRuntimes::new);
  }
}
