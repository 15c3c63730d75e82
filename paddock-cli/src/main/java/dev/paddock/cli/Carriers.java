package dev.paddock.cli;

/**
 * How many carrier threads the JVM's virtual threads run on: four per core rather than the JDK's
 * one. The control plane serves every request (the API, {@code /health}, the gateway's relays) on
 * virtual threads, and shares the host's cores with the sandboxes' processes. With one carrier per
 * core, the control plane is as many runnable threads as there are cores against dozens of sandbox
 * processes, and a request waits for a carrier behind the relays whenever the kernel has put the
 * carriers aside: on 2 cores with 50 sandboxes and 100 commands relayed, {@code /health} answered
 * at p95 in 181-207 ms against an idle JVM web server's 65-77 ms on the same machine; with four per
 * core in 64-70 ms against its 104, at the same command rate (docs/RELIABILITY.md, "Load"). Idle
 * carriers cost nothing: the pool starts them as work needs them. An operator's own {@code
 * -Djdk.virtualThreadScheduler.parallelism} wins.
 */
final class Carriers {
  static final String PARALLELISM = "jdk.virtualThreadScheduler.parallelism";
  static final int PER_CORE = 4;

  private Carriers() {}

  /**
   * Sets the number of carriers unless it is set already. Only before the JVM's first virtual
   * thread: the scheduler reads the property once, when it is made.
   */
  static void widen() {
    if (System.getProperty(PARALLELISM) == null) {
      int cores = Runtime.getRuntime().availableProcessors();
      System.setProperty(PARALLELISM, Integer.toString(cores * PER_CORE));
    }
  }
}
