package dev.paddock.backend.docker;

/**
 * The host pids limit of a sandbox container under gVisor ({@code runsc}), where the user's pids
 * limit is enforced inside the sandbox instead (an {@code RLIMIT_NPROC} the Sentry checks on every
 * clone) and the host cgroup only keeps a runaway sandbox from exhausting the host's pid space.
 *
 * <p>The host cgroup counts gVisor's own tasks: the Sentry's threads, the Gofer, and on the ptrace
 * platform one stub process per address space with a traced thread for every Sentry thread that
 * ever ran it (gVisor 20221219, {@code pkg/sentry/platform/ptrace/subprocess.go}; stubs are pooled,
 * never killed, so the count stays at its peak for the sandbox's life). That grows with the tasks
 * inside times the Sentry's threads, and a Sentry that cannot create a thread ends the whole
 * sandbox, so the net is wide: {@link #BASE} for an idle sandbox with its agent plus {@link
 * #PER_TASK} for each task the user may run, figures measured on our machines (docs/SECURITY.md).
 */
final class GvisorPids {
  /** Host tasks of an idle sandbox with its agent, with head-room. */
  static final int BASE = 512;

  /** Host tasks per task inside at the limit (a fork bomb held for the exec timeout). */
  static final int PER_TASK = 32;

  /**
   * The most a sandbox's host cgroup gets, whatever its inner limit: half of Linux's default {@code
   * kernel.pid_max} (32768), so that one sandbox can never take the host's whole pid space.
   */
  static final int MAX = 16384;

  private GvisorPids() {}

  /** The host cgroup's limit for a sandbox whose user may run {@code inner} tasks. */
  static int hostLimit(int inner) {
    return (int) Math.min(MAX, BASE + (long) inner * PER_TASK);
  }
}
