package dev.paddock.backend.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A cgroup freezer, v1 or v2: the state is written to one control file and read back until the
 * kernel has finished. v1 writes {@code freezer.state} FROZEN / THAWED and reads it back (a cgroup
 * may sit in FREEZING while a task is in an uninterruptible sleep; writing the target again
 * retries); v2 writes {@code cgroup.freeze} 1 / 0 and reads {@code frozen} in {@code
 * cgroup.events}. Killing writes {@code cgroup.kill} where the kernel has it (v2, Linux 5.14+),
 * which kills every member atomically, frozen or not; otherwise it freezes (no new forks), signals
 * every member, then thaws, since frozen tasks cannot act on SIGKILL.
 */
final class CgroupFreezer implements Freezer {
  static final String V1 = "cgroup-v1";
  static final String V2 = "cgroup-v2";
  private static final Duration SETTLE = Duration.ofSeconds(10);

  /** How one cgroup version spells freezing. */
  private record Flavour(String kind, String control, String frozen, String thawed) {}

  private static final Flavour V1_FLAVOUR = new Flavour(V1, "freezer.state", "FROZEN", "THAWED");
  private static final Flavour V2_FLAVOUR = new Flavour(V2, "cgroup.freeze", "1", "0");

  private final Flavour flavour;
  private final CgroupFiles files;
  private final Signals signals;

  private CgroupFreezer(Flavour flavour, Path dir, Signals signals) {
    this.flavour = flavour;
    this.files = new CgroupFiles(dir);
    this.signals = signals;
  }

  /** The freezer of the cgroup {@code dir}, of {@code kind} {@link #V1} or {@link #V2}. */
  static CgroupFreezer of(String kind, Path dir, Signals signals) {
    return new CgroupFreezer(kind.equals(V1) ? V1_FLAVOUR : V2_FLAVOUR, dir, signals);
  }

  /** The file that must be writable for {@code kind} to be usable. */
  static String controlFile(String kind) {
    return (kind.equals(V1) ? V1_FLAVOUR : V2_FLAVOUR).control();
  }

  @Override
  public String kind() {
    return flavour.kind();
  }

  @Override
  public Optional<Path> cgroup() {
    return Optional.of(files.dir());
  }

  @Override
  public void attach(long pid) throws IOException {
    files.create();
    files.write("cgroup.procs", Long.toString(pid));
  }

  @Override
  public void freeze() {
    settle(flavour.frozen());
  }

  @Override
  public void thaw() {
    settle(flavour.thawed());
  }

  private void settle(String target) {
    if (!files.exists()) {
      return;
    }
    files.write(flavour.control(), target);
    boolean settled =
        Poll.until(
            () -> {
              String state = state().orElse(target);
              if (state.equals("FREEZING")) {
                files.write(flavour.control(), target);
              }
              return state.equals(target);
            },
            SETTLE);
    if (!settled) {
      throw new IllegalStateException(
          files.dir() + " did not reach " + flavour.control() + " " + target + " in " + SETTLE);
    }
  }

  /** What the kernel reports: v1's state file itself, v2's {@code frozen} event. */
  private Optional<String> state() {
    return flavour == V1_FLAVOUR
        ? files.read(flavour.control())
        : files.keyed("cgroup.events", "frozen");
  }

  @Override
  public boolean frozen() {
    return state().filter(flavour.frozen()::equals).isPresent();
  }

  @Override
  public List<Long> members() {
    return files.procs();
  }

  @Override
  public void killAll() {
    if (!files.exists()) {
      return;
    }
    if (Files.exists(files.dir().resolve("cgroup.kill"))) {
      files.write("cgroup.kill", "1");
    } else {
      freeze();
      signals.kill(files.procs());
      thaw();
    }
    if (!Poll.until(() -> files.procs().isEmpty(), SETTLE)) {
      throw new IllegalStateException("processes left in " + files.dir() + ": " + files.procs());
    }
  }

  @Override
  public void remove() {
    files.remove();
  }
}
