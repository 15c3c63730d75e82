package dev.paddock.controlplane;

import dev.paddock.api.Caller;
import dev.paddock.api.LifetimeAction;
import dev.paddock.api.LogChunk;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxLogs;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each sandbox's log, kept in a directory of the control plane ({@code <data dir>/logs/}) so it
 * outlives the sandbox: one line per lifecycle event ({@code <time> [paddock] <event>}) as the
 * control plane reports it (it is the {@link #events()} listener), and the agent's output, copied
 * from the runtime ({@link SandboxBackend#agentLog}) whenever the log is read and before the
 * runtime is destroyed. Agent output is copied in whole lines, so event lines never split one.
 *
 * <p>Bounded: at most {@link Limits#maxBytes} per sandbox (the agent's output stops {@link
 * #EVENT_RESERVE} bytes short of it, with one line saying so, so the last lifecycle events still
 * fit). Kept until {@link Limits#retention} after the sandbox's delete; {@link #prune} removes what
 * is older. Two files per sandbox: {@code <id>.log} and {@code <id>.meta} (its owner, how much of
 * the agent's output was copied, when it was deleted).
 *
 * <p>Thread-safe: the files of one sandbox are written under one of {@link #STRIPES} locks chosen
 * by its id, never while another is held.
 */
public final class KeptLogs implements SandboxLogs {
  private static final Logger LOG = LoggerFactory.getLogger(KeptLogs.class);

  /** The smallest cap {@link Limits} accepts. */
  public static final long MIN_BYTES = 64 << 10;

  /** Bytes kept free for lifecycle lines once the agent's output reached the cap. */
  static final long EVENT_RESERVE = 16 << 10;

  /** The most bytes one {@link #read} returns. */
  static final int CHUNK = 64 << 10;

  private static final int STRIPES = 64;
  private static final Pattern SAFE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

  /**
   * @param retention how long a log is kept after its sandbox's delete
   * @param maxBytes most bytes of one sandbox's log
   */
  public record Limits(Duration retention, long maxBytes) {
    public Limits {
      Objects.requireNonNull(retention, "retention");
      if (retention.isNegative() || retention.isZero()) {
        throw new IllegalArgumentException("retention must be positive, got " + retention);
      }
      if (maxBytes < MIN_BYTES) {
        throw new IllegalArgumentException("maxBytes must be at least " + MIN_BYTES);
      }
    }
  }

  private final Path dir;
  private final SandboxStore store;
  private final SandboxBackend backend;
  private final Limits limits;
  private final Clock clock;
  private final Object[] locks = new Object[STRIPES];
  private final SandboxEvents events = new Events();

  private KeptLogs(
      Path dir, SandboxStore store, SandboxBackend backend, Limits limits, Clock clock) {
    this.dir = dir;
    this.store = store;
    this.backend = backend;
    this.limits = limits;
    this.clock = clock;
    for (int i = 0; i < STRIPES; i++) {
      locks[i] = new Object();
    }
  }

  /**
   * Logs kept in {@code dir} (created when missing), of the sandboxes in {@code store} whose
   * runtimes {@code backend} runs.
   */
  public static KeptLogs create(
      Path dir, SandboxStore store, SandboxBackend backend, Limits limits, Clock clock) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the log directory " + dir, e);
    }
    return new KeptLogs(
        dir,
        Objects.requireNonNull(store, "store"),
        Objects.requireNonNull(backend, "backend"),
        Objects.requireNonNull(limits, "limits"),
        Objects.requireNonNull(clock, "clock"));
  }

  /** The listener that writes the lifecycle lines; give it to the control plane's events. */
  public SandboxEvents events() {
    return events;
  }

  @Override
  public Optional<LogChunk> read(Caller caller, String sandboxId, long offset) {
    if (!SAFE_ID.matcher(sandboxId).matches() || offset < 0) {
      return Optional.empty();
    }
    Optional<SandboxRecord> record = store.find(sandboxId);
    Optional<String> owner =
        record.isPresent() ? record.get().ownerUserId() : meta(sandboxId).owner();
    boolean known = record.isPresent() || Files.exists(logFile(sandboxId));
    if (!known || !caller.mayAccess(owner)) {
      return Optional.empty();
    }
    record.flatMap(SandboxRecord::runtime).ifPresent(runtime -> copyAgentLog(sandboxId, runtime));
    return Optional.of(chunk(sandboxId, offset, ended(sandboxId, record)));
  }

  /**
   * No line will follow: the sandbox is no longer live (and not being deleted), or gone with its
   * {@code deleted} line written (the record goes a moment before that line; a log left without
   * one, by a crash or another control plane, counts as ended once it has been quiet for {@link
   * #QUIET}).
   */
  private boolean ended(String sandboxId, Optional<SandboxRecord> record) {
    if (record.isPresent()) {
      SandboxRecord r = record.get();
      // a delete under way marks its record ERROR first; its deleted line is still to come
      return !LIVE.contains(r.status()) && !StartFailures.deleting(r.statusDetail(), sandboxId);
    }
    if (meta(sandboxId).deletedAt().isPresent()) {
      return true;
    }
    try {
      return Files.getLastModifiedTime(logFile(sandboxId))
          .toInstant()
          .isBefore(Instant.now().minus(QUIET));
    } catch (IOException e) {
      return true;
    }
  }

  private static final Duration QUIET = Duration.ofSeconds(5);

  private static final java.util.Set<SandboxStatus> LIVE =
      java.util.EnumSet.of(SandboxStatus.STARTING, SandboxStatus.RUNNING, SandboxStatus.PAUSED);

  private LogChunk chunk(String sandboxId, long offset, boolean ended) {
    Path log = logFile(sandboxId);
    try (java.nio.channels.FileChannel file = java.nio.channels.FileChannel.open(log)) {
      long size = file.size();
      long from = Math.min(offset, size);
      java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate((int) Math.min(CHUNK, size - from));
      while (buffer.hasRemaining() && file.read(buffer, from + buffer.position()) > 0) {
        // reads until the buffer is full or the file ends
      }
      byte[] bytes = java.util.Arrays.copyOf(buffer.array(), buffer.position());
      long next = from + bytes.length;
      return new LogChunk(bytes, next, ended && next >= size);
    } catch (java.nio.file.NoSuchFileException e) {
      return new LogChunk(new byte[0], 0, ended);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the log of sandbox " + sandboxId, e);
    }
  }

  /**
   * Removes the logs of sandboxes deleted longer than the retention ago, and logs left without a
   * sandbox (deleted by another control plane, or before a crash) whose last line is that old.
   *
   * @return how many sandboxes' logs it removed
   */
  public int prune() {
    Instant cutoff = clock.instant().minus(limits.retention());
    int removed = 0;
    try (Stream<Path> files = Files.list(dir)) {
      for (Path log : files.filter(p -> p.toString().endsWith(".log")).toList()) {
        String id = log.getFileName().toString().replaceFirst("\\.log$", "");
        if (SAFE_ID.matcher(id).matches() && expired(id, log, cutoff)) {
          synchronized (lock(id)) {
            Files.deleteIfExists(log);
            Files.deleteIfExists(metaFile(id));
          }
          removed++;
        }
      }
    } catch (IOException | UncheckedIOException e) {
      LOG.warn("pruning kept logs in {} failed (the next pass retries)", dir, e);
    }
    return removed;
  }

  private boolean expired(String id, Path log, Instant cutoff) throws IOException {
    Optional<Instant> deleted = meta(id).deletedAt();
    if (deleted.isPresent()) {
      return deleted.get().isBefore(cutoff);
    }
    return store.find(id).isEmpty() && Files.getLastModifiedTime(log).toInstant().isBefore(cutoff);
  }

  // ------------------------------------------------------------------ writing

  /** Appends what the agent printed since the last copy, in whole lines, within the cap. */
  private void copyAgentLog(String sandboxId, RuntimeHandle runtime) {
    copyAgentLog(sandboxId, runtime, false);
  }

  private void copyAgentLog(String sandboxId, RuntimeHandle runtime, boolean last) {
    if (!SAFE_ID.matcher(sandboxId).matches()) {
      return;
    }
    synchronized (lock(sandboxId)) {
      try {
        LogMeta meta = meta(sandboxId);
        long room = limits.maxBytes() - EVENT_RESERVE - size(sandboxId);
        if (meta.capped() || room <= 0) {
          capReached(sandboxId, meta);
          return;
        }
        int want = (int) Math.min(room, 256 << 10);
        Optional<byte[]> printed = backend.agentLog(runtime, meta.agentOffset(), want);
        if (printed.isEmpty() || printed.get().length == 0) {
          return;
        }
        byte[] bytes = printed.get();
        int keep = wholeLines(bytes, last || bytes.length == want);
        if (keep == 0) {
          return;
        }
        byte[] kept = java.util.Arrays.copyOf(bytes, keep);
        append(sandboxId, endsWithNewline(kept) ? kept : withNewline(kept));
        writeMeta(sandboxId, meta.withAgentOffset(meta.agentOffset() + keep));
      } catch (IOException | RuntimeException e) {
        LOG.warn("sandbox {}: copying its agent's log failed", sandboxId, e);
      }
    }
  }

  private void capReached(String sandboxId, LogMeta meta) throws IOException {
    if (!meta.capped()) {
      append(
          sandboxId,
          line("log cap of " + limits.maxBytes() + " bytes reached: later agent output is not kept")
              .getBytes(java.nio.charset.StandardCharsets.UTF_8));
      writeMeta(sandboxId, meta.withCapped());
    }
  }

  /** How many leading bytes end a line; all of them when {@code all}. */
  private static int wholeLines(byte[] bytes, boolean all) {
    if (all) {
      return bytes.length;
    }
    for (int i = bytes.length - 1; i >= 0; i--) {
      if (bytes[i] == '\n') {
        return i + 1;
      }
    }
    return 0;
  }

  private static boolean endsWithNewline(byte[] bytes) {
    return bytes.length > 0 && bytes[bytes.length - 1] == '\n';
  }

  private static byte[] withNewline(byte[] bytes) {
    byte[] out = java.util.Arrays.copyOf(bytes, bytes.length + 1);
    out[bytes.length] = '\n';
    return out;
  }

  /** Writes one lifecycle line, if it fits under the cap. */
  private void event(String sandboxId, String text) {
    if (!SAFE_ID.matcher(sandboxId).matches()) {
      return;
    }
    byte[] bytes = line(text).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    synchronized (lock(sandboxId)) {
      try {
        if (size(sandboxId) + bytes.length <= limits.maxBytes()) {
          append(sandboxId, bytes);
        }
      } catch (IOException | RuntimeException e) {
        LOG.warn("sandbox {}: writing its kept log failed", sandboxId, e);
      }
    }
  }

  private String line(String text) {
    return clock.instant() + " [paddock] " + text + "\n";
  }

  private void append(String sandboxId, byte[] bytes) throws IOException {
    Files.write(
        logFile(sandboxId),
        bytes,
        java.nio.file.StandardOpenOption.CREATE,
        java.nio.file.StandardOpenOption.APPEND);
  }

  private long size(String sandboxId) throws IOException {
    Path log = logFile(sandboxId);
    return Files.exists(log) ? Files.size(log) : 0;
  }

  private Object lock(String sandboxId) {
    return locks[Math.floorMod(sandboxId.hashCode(), STRIPES)];
  }

  private Path logFile(String sandboxId) {
    return dir.resolve(sandboxId + ".log");
  }

  private Path metaFile(String sandboxId) {
    return dir.resolve(sandboxId + ".meta");
  }

  private LogMeta meta(String sandboxId) {
    return LogMeta.read(metaFile(sandboxId));
  }

  private void writeMeta(String sandboxId, LogMeta meta) throws IOException {
    meta.write(metaFile(sandboxId));
  }

  private void changeMeta(String sandboxId, java.util.function.UnaryOperator<LogMeta> change) {
    synchronized (lock(sandboxId)) {
      try {
        writeMeta(sandboxId, change.apply(meta(sandboxId)));
      } catch (IOException | RuntimeException e) {
        LOG.warn("sandbox {}: writing its kept log's record failed", sandboxId, e);
      }
    }
  }

  /** The lifecycle lines, as the control plane reports its events. Never throws. */
  private final class Events implements SandboxEvents {
    @Override
    public void created(SandboxInfo sandbox) {
      if (SAFE_ID.matcher(sandbox.id()).matches()) {
        changeMeta(sandbox.id(), m -> m.withOwner(sandbox.createdByUserId()));
        event(sandbox.id(), "created (spec " + sandbox.sandboxSpecId() + ")");
      }
    }

    @Override
    public void started(String sandboxId, Duration took) {
      event(sandboxId, String.format(Locale.ROOT, "started (RUNNING after %.3f s)", seconds(took)));
    }

    @Override
    public void startFailed(String sandboxId, RuntimeFailure.Kind kind) {
      event(sandboxId, "failed (class " + kind.id() + ")");
    }

    @Override
    public void paused(String sandboxId) {
      event(sandboxId, "paused");
    }

    @Override
    public void resumed(String sandboxId) {
      event(sandboxId, "resumed");
    }

    @Override
    public void archived(String sandboxId) {
      event(sandboxId, "archived (workspace)");
    }

    @Override
    public void deleting(String sandboxId, RuntimeHandle runtime) {
      copyAgentLog(sandboxId, runtime, true);
    }

    @Override
    public void deleted(String sandboxId) {
      if (SAFE_ID.matcher(sandboxId).matches()) {
        event(sandboxId, "deleted");
        Instant now = clock.instant();
        changeMeta(sandboxId, m -> m.withDeletedAt(now));
      }
    }

    @Override
    public void lifetimeEnded(String sandboxId, String reason, LifetimeAction action) {
      String what = reason.equals("timeout") ? "timed out (lifetime ended)" : "timed out (idle)";
      event(sandboxId, what + ": " + action.wireName());
    }

    private static double seconds(Duration d) {
      return d.toNanos() / 1e9;
    }
  }
}
