package dev.paddock.api.spi;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * One finding of {@code paddock doctor}: what was checked, the verdict, what was seen and, unless
 * the verdict is {@link Verdict#OK}, what to do about it.
 *
 * @param name a short name such as {@code docker engine} or {@code free disk (data dir)}
 * @param verdict the outcome
 * @param detail what was seen (versions, sizes, paths); shown to the operator of this host
 * @param fix the next step for a warning or failure; empty when there is nothing to do
 */
public record HostCheck(String name, Verdict verdict, String detail, String fix) {
  /** Below this much free space a check fails: a sandbox start or an archive would not fit. */
  public static final long DISK_FAIL_BYTES = 512L << 20;

  /** Below this much free space a check warns. */
  public static final long DISK_WARN_BYTES = 2L << 30;

  /** How a check came out; {@link #FAIL} makes {@code paddock doctor} exit non-zero. */
  public enum Verdict {
    OK,
    WARN,
    FAIL,
    /** Not run because a check it depends on failed. */
    SKIPPED
  }

  public HostCheck {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(verdict, "verdict");
    Objects.requireNonNull(detail, "detail");
    Objects.requireNonNull(fix, "fix");
  }

  public static HostCheck ok(String name, String detail) {
    return new HostCheck(name, Verdict.OK, detail, "");
  }

  public static HostCheck warn(String name, String detail, String fix) {
    return new HostCheck(name, Verdict.WARN, detail, fix);
  }

  public static HostCheck fail(String name, String detail, String fix) {
    return new HostCheck(name, Verdict.FAIL, detail, fix);
  }

  public static HostCheck skipped(String name, String why) {
    return new HostCheck(name, Verdict.SKIPPED, why, "");
  }

  /**
   * Free space on the file system holding {@code dir} (or its nearest existing parent): FAIL under
   * {@link #DISK_FAIL_BYTES}, WARN under {@link #DISK_WARN_BYTES}.
   */
  public static HostCheck freeDisk(String name, Path dir) {
    Path existing = dir.toAbsolutePath();
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return fail(name, dir + " has no existing parent", "create " + dir);
    }
    try {
      long free = Files.getFileStore(existing).getUsableSpace();
      String detail = bytes(free) + " free under " + dir;
      String fix = "free space on that file system (old archives, images: docker image prune)";
      if (free < DISK_FAIL_BYTES) {
        return fail(name, detail, fix);
      }
      return free < DISK_WARN_BYTES ? warn(name, detail, fix) : ok(name, detail);
    } catch (IOException e) {
      return fail(name, "cannot read the free space of " + existing + ": " + e, "check " + dir);
    }
  }

  /** {@code bytes} as e.g. {@code 1.5 GiB}, for details. */
  public static String bytes(long bytes) {
    String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = bytes;
    int unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit++;
    }
    return unit == 0
        ? bytes + " B"
        : String.format(java.util.Locale.ROOT, "%.1f %s", value, units[unit]);
  }
}
