package dev.paddock.backend.process;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Map;

/** The freezer kinds a test can force, and whether this host offers each. */
enum Freezing {
  CGROUP_V1("cgroup-v1"),
  CGROUP_V2("cgroup-v2"),
  SIGNALS("signals");

  final String setting;

  Freezing(String setting) {
    this.setting = setting;
  }

  Map<String, String> settings() {
    return Map.of("process.freezer", setting);
  }

  /** Skips the test, saying why, when this host cannot use the freezer. */
  void assumeAvailable() {
    boolean available;
    try {
      Freezers.detect(setting, ProcFs.system(), new Signals(ProcessLauncher.system()));
      available = true;
    } catch (IllegalArgumentException e) {
      available = false;
    }
    assumeTrue(
        available, setting + " is not usable on this host (needs root or a delegated cgroup)");
  }
}
