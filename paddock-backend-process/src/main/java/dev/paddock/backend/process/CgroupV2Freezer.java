package dev.paddock.backend.process;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The cgroup v2 freezer: {@code cgroup.freeze} 1 / 0, then {@code cgroup.events} is read until it
 * says {@code frozen 1} / {@code frozen 0}. Killing writes {@code cgroup.kill} (Linux 5.14+), which
 * kills every member atomically, frozen or not; older kernels get freeze, SIGKILL each, thaw.
 */
final class CgroupV2Freezer implements Freezer {
  static final String KIND = "cgroup-v2";
  private static final Duration SETTLE = Duration.ofSeconds(10);

  private final CgroupFiles files;
  private final Signals signals;

  CgroupV2Freezer(Path dir, Signals signals) {
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
    settle("1");
  }

  @Override
  public void thaw() {
    settle("0");
  }

  private void settle(String target) {
    if (!files.exists()) {
      return;
    }
    files.write("cgroup.freeze", target);
    boolean settled =
        Poll.until(
            () -> files.keyed("cgroup.events", "frozen").orElse(target).equals(target), SETTLE);
    if (!settled) {
      throw new IllegalStateException(
          files.dir() + " did not reach frozen " + target + " in " + SETTLE);
    }
  }

  @Override
  public boolean frozen() {
    return files.keyed("cgroup.events", "frozen").filter("1"::equals).isPresent();
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
    if (files.dir().resolve("cgroup.kill").toFile().exists()) {
      files.write("cgroup.kill", "1");
    } else {
      freeze();
      signals.kill(files.procs());
      thaw();
    }
    boolean empty =
        Poll.until(() -> files.keyed("cgroup.events", "populated").orElse("0").equals("0"), SETTLE);
    if (!empty) {
      throw new IllegalStateException("processes left in " + files.dir() + ": " + files.procs());
    }
  }

  @Override
  public void remove() {
    files.remove();
  }
}
