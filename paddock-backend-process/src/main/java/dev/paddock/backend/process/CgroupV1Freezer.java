package dev.paddock.backend.process;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The cgroup v1 freezer: {@code freezer.state} FROZEN / THAWED, read back until the kernel has
 * finished (a cgroup may sit in FREEZING while a task is in an uninterruptible sleep; writing
 * FROZEN again retries). Frozen tasks cannot act on SIGKILL, so killing freezes (no new forks),
 * signals every member, then thaws.
 */
final class CgroupV1Freezer implements Freezer {
  static final String KIND = "cgroup-v1";
  private static final Duration SETTLE = Duration.ofSeconds(10);

  private final CgroupFiles files;
  private final Signals signals;

  CgroupV1Freezer(Path dir, Signals signals) {
    this.files = new CgroupFiles(dir);
    this.signals = signals;
  }

  @Override
  public String kind() {
    return KIND;
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
    settle("FROZEN");
  }

  @Override
  public void thaw() {
    settle("THAWED");
  }

  private void settle(String target) {
    if (!files.exists()) {
      return;
    }
    files.write("freezer.state", target);
    boolean settled =
        Poll.until(
            () -> {
              String state = files.read("freezer.state").orElse(target);
              if (state.equals("FREEZING")) {
                files.write("freezer.state", target);
              }
              return state.equals(target);
            },
            SETTLE);
    if (!settled) {
      throw new IllegalStateException(files.dir() + " did not reach " + target + " in " + SETTLE);
    }
  }

  @Override
  public boolean frozen() {
    return files.read("freezer.state").filter("FROZEN"::equals).isPresent();
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
    freeze();
    signals.kill(files.procs());
    thaw();
    if (!Poll.until(() -> files.procs().isEmpty(), SETTLE)) {
      throw new IllegalStateException("processes left in " + files.dir() + ": " + files.procs());
    }
  }

  @Override
  public void remove() {
    files.remove();
  }
}
