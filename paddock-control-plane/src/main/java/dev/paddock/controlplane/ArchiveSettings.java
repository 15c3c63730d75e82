package dev.paddock.controlplane;

import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * When and how the control plane archives a sandbox's workspace before deleting it.
 *
 * @param enabled archive before every delete of a RUNNING sandbox (default off)
 * @param required a failed archive blocks the delete (HTTP 503) and keeps the sandbox as it was;
 *     otherwise the failure is logged and the delete proceeds (default off)
 * @param format {@code tar.gz}, {@code git-delta} or {@code both} (default)
 * @param timeout the longest one archive download may take (default 660 s: the agent's git budget
 *     of read-tree 60 s + add 300 s + diff 300 s)
 * @param prefix the first segment(s) of every archive key (default {@code workspace-archives})
 * @param initialSnapshot also archive each sandbox once right after it is RUNNING, phase {@code
 *     initial}: in the background, best effort, never delaying or failing the start (default off)
 * @param initialDeadline the longest the initial snapshot may take as a whole (default 120 s)
 */
public record ArchiveSettings(
    boolean enabled,
    boolean required,
    String format,
    Duration timeout,
    String prefix,
    boolean initialSnapshot,
    Duration initialDeadline) {
  public static final String TAR_GZ = "tar.gz";
  public static final String GIT_DELTA = "git-delta";
  public static final String BOTH = "both";
  private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*");

  // RUNTIME_FILE_ARCHIVE_*, as OpenHands names them (and ours); see README.

  public static final Setting<Boolean> ENABLED =
      Setting.bool("RUNTIME_FILE_ARCHIVE_ENABLED", "archive the workspace before every delete")
          .withDefault(false);
  public static final Setting<Boolean> REQUIRED =
      Setting.bool(
              "RUNTIME_FILE_ARCHIVE_REQUIRED",
              "a failed archive blocks the delete (503) instead of being logged")
          .withDefault(false);
  public static final Setting<String> FORMAT =
      Setting.oneOf("RUNTIME_FILE_ARCHIVE_FORMAT", "what is archived", TAR_GZ, GIT_DELTA, BOTH)
          .withDefault(BOTH);
  public static final Setting<Duration> TIMEOUT =
      Setting.duration("RUNTIME_FILE_ARCHIVE_TIMEOUT", "the longest one archive download may take")
          .requiring(d -> !d.isZero(), "a positive duration such as 660 (seconds) or 11m")
          .withDefault(Duration.ofSeconds(660));
  public static final Setting<String> PREFIX_SETTING =
      Setting.string("RUNTIME_FILE_ARCHIVE_PREFIX", "the first segment(s) of every archive key")
          .requiring(
              p -> PREFIX.matcher(p).matches() && !p.contains(".."),
              "'/'-separated segments of letters, digits, '.', '_' and '-'")
          .withDefault("workspace-archives");
  public static final Setting<Boolean> INITIAL_SNAPSHOT =
      Setting.bool(
              "RUNTIME_FILE_ARCHIVE_INITIAL_SNAPSHOT",
              "also archive each sandbox once right after it is RUNNING (best effort)")
          .withDefault(false);
  public static final Setting<Duration> INITIAL_TIMEOUT =
      Setting.duration(
              "RUNTIME_FILE_ARCHIVE_INITIAL_TIMEOUT", "the longest the initial snapshot may take")
          .requiring(d -> !d.isZero(), "a positive duration such as 120 (seconds) or 2m")
          .withDefault(Duration.ofSeconds(120));
  public static final Setting<String> STORE =
      Setting.string("RUNTIME_FILE_ARCHIVE_STORE", "where archives go: directory or s3")
          .withDefault("directory");

  /** Every archive setting, in the order help lists them. */
  public static final List<Setting<?>> ALL =
      List.of(
          ENABLED,
          REQUIRED,
          FORMAT,
          TIMEOUT,
          PREFIX_SETTING,
          INITIAL_SNAPSHOT,
          INITIAL_TIMEOUT,
          STORE);

  public ArchiveSettings {
    Objects.requireNonNull(format, "format");
    if (!List.of(TAR_GZ, GIT_DELTA, BOTH).contains(format)) {
      throw new IllegalArgumentException(
          "archive format must be tar.gz, git-delta or both, got '" + format + "'");
    }
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("archive timeout must be positive, got " + timeout);
    }
    Objects.requireNonNull(initialDeadline, "initialDeadline");
    if (initialDeadline.isNegative() || initialDeadline.isZero()) {
      throw new IllegalArgumentException(
          "initial snapshot deadline must be positive, got " + initialDeadline);
    }
    Objects.requireNonNull(prefix, "prefix");
    if (!PREFIX.matcher(prefix).matches() || prefix.contains("..")) {
      throw new IllegalArgumentException(
          "archive prefix must be '/'-separated segments of letters, digits, '.', '_' and '-', got"
              + " '"
              + prefix
              + "'");
    }
  }

  /** Archive before delete as given, with no initial snapshot. */
  public ArchiveSettings(
      boolean enabled, boolean required, String format, Duration timeout, String prefix) {
    this(enabled, required, format, timeout, prefix, false, DEFAULT_INITIAL_DEADLINE);
  }

  private static final Duration DEFAULT_INITIAL_DEADLINE = Duration.ofSeconds(120);

  /** Archiving off; the other fields at their defaults. */
  public static ArchiveSettings disabled() {
    return new ArchiveSettings(false, false, BOTH, Duration.ofSeconds(660), "workspace-archives");
  }

  /**
   * The archive settings {@code settings} hold.
   *
   * @throws IllegalArgumentException when one of {@link #ALL} is not declared in {@code settings}
   */
  public static ArchiveSettings fromSettings(Settings settings) {
    ArchiveSettings archives =
        new ArchiveSettings(
            settings.get(ENABLED),
            settings.get(REQUIRED),
            settings.get(FORMAT),
            settings.get(TIMEOUT),
            settings.get(PREFIX_SETTING));
    return settings.get(INITIAL_SNAPSHOT)
        ? archives.withInitialSnapshot(settings.get(INITIAL_TIMEOUT))
        : archives;
  }

  /** These settings with the initial snapshot on, bounded by {@code deadline}. */
  public ArchiveSettings withInitialSnapshot(Duration deadline) {
    return new ArchiveSettings(enabled, required, format, timeout, prefix, true, deadline);
  }

  /** The formats to capture, git-delta first (its base commit also describes the tar.gz). */
  List<String> formats() {
    return switch (format) {
      case TAR_GZ -> List.of(TAR_GZ);
      case GIT_DELTA -> List.of(GIT_DELTA);
      default -> List.of(GIT_DELTA, TAR_GZ);
    };
  }
}
