package dev.paddock.agent.bash;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One command: what was asked, its output spooled to disk (capped per channel), the events cut from
 * that output, and its result once done. Output is appended by the reader threads and cut into
 * {@link BashEvent.Output} events ("sealed") by size, by time and at exit. Guarded by {@code this};
 * listeners and the {@code afterCut} hook are called outside the lock.
 */
final class CommandRecord {
  /** Largest slice of one channel carried by one output event (as OpenHands' 1 MiB chunks). */
  static final int MAX_CHUNK = 1 << 20;

  /** Output waiting longer than this is cut into an event, so pollers see it promptly. */
  static final long SEAL_INTERVAL_NANOS = 100_000_000L;

  final String id;
  final String command;
  final Optional<String> cwd;
  final long timeoutSeconds;
  final Optional<String> session;
  final Instant timestamp;
  final CompletableFuture<CommandResult> result = new CompletableFuture<>();
  final List<OutputListener> listeners = new CopyOnWriteArrayList<>();

  private final Path spoolDir;
  private final long cap;
  private final EventLog log;
  private final Runnable afterCut;
  private final OomKillCounter oomKills;
  private final Spool stdout;
  private final Spool stderr;
  private final List<BashEvent> events = new ArrayList<>();
  private int nextOrder;
  private long lastSealNanos = System.nanoTime();
  private boolean finished;
  private int pins;
  // The cgroup's OOM kill count when the command started; empty when unreadable.
  private OptionalLong oomKillsAtStart;
  private volatile CommandControl control;

  CommandRecord(
      String id,
      String command,
      Optional<String> cwd,
      long timeoutSeconds,
      Optional<String> session,
      Path spoolDir,
      long cap,
      EventLog log,
      OomKillCounter oomKills,
      Runnable afterCut) {
    this.id = id;
    this.command = command;
    this.cwd = cwd;
    this.timeoutSeconds = timeoutSeconds;
    this.session = session;
    this.timestamp = Instant.now();
    this.spoolDir = spoolDir;
    this.cap = cap;
    this.log = log;
    this.afterCut = afterCut;
    this.oomKills = oomKills;
    this.oomKillsAtStart = oomKills.read();
    this.stdout = new Spool(spoolDir.resolve(id + ".stdout"));
    this.stderr = new Spool(spoolDir.resolve(id + ".stderr"));
  }

  /**
   * The command is about to reach its shell now (a session command may have waited its turn): OOM
   * kills are counted from here.
   */
  void markStarted() {
    OptionalLong now = oomKills.read();
    synchronized (this) {
      oomKillsAtStart = now;
    }
  }

  void attach(CommandControl control) {
    this.control = control;
  }

  Optional<CommandControl> control() {
    return Optional.ofNullable(control);
  }

  boolean running() {
    return !result.isDone();
  }

  /** Appends output from a reader thread, then hands the raw bytes to live listeners. */
  void append(Channel channel, byte[] data, int offset, int length) {
    boolean cut = false;
    synchronized (this) {
      if (finished) {
        return;
      }
      spool(channel).write(data, offset, length, false);
      if (spool(channel).pending() >= MAX_CHUNK
          || System.nanoTime() - lastSealNanos >= SEAL_INTERVAL_NANOS) {
        cut = cut(Optional.empty());
      }
    }
    if (cut) {
      afterCut.run();
    }
    for (OutputListener listener : listeners) {
      try {
        listener.output(channel, data, offset, length);
      } catch (Exception e) {
        listeners.remove(listener);
      }
    }
  }

  /** Timer tick: cuts output that has waited long enough into an event, so pollers see it. */
  void sealIfDue() {
    boolean cut = false;
    synchronized (this) {
      if (!finished && System.nanoTime() - lastSealNanos >= SEAL_INTERVAL_NANOS) {
        cut = cut(Optional.empty());
      }
    }
    if (cut) {
      afterCut.run();
    }
  }

  /** Records the end: the final event with the exit code, then listeners and waiters. */
  void finish(CommandResult outcome) {
    synchronized (this) {
      if (finished) {
        return;
      }
      cut(Optional.of(outcome));
      finished = true;
      stdout.close();
      stderr.close();
    }
    for (OutputListener listener : listeners) {
      try {
        listener.finished(outcome);
      } catch (Exception e) {
        // A listener's failure (a client that went away) must not affect the command.
      }
    }
    listeners.clear();
    result.complete(outcome);
  }

  /**
   * Finishes with a result carrying this record's truncation flags, the time since {@code
   * startedNanos} (a {@link System#nanoTime()} reading), and whether the OOM killer ended it: then
   * the error says so and stderr gets a line saying so (an agent reading only the output learns why
   * it got 137).
   */
  void end(
      int exitCode,
      boolean timedOut,
      Optional<String> error,
      boolean sessionReset,
      long startedNanos) {
    boolean oomKilled = !timedOut && exitCode == CommandResult.SIGKILL_EXIT && oomKillCounted();
    Optional<String> reason = error;
    for (Channel channel : Channel.values()) {
      if (truncated(channel)) {
        // In band, where a client that only reads the output (OpenHands' pollers) sees it.
        note(
            "paddock: "
                + channel.name().toLowerCase(java.util.Locale.ROOT)
                + " cut at "
                + bytesKept(channel)
                + " bytes (the agent's output history limit); the rest was not kept");
      }
    }
    if (oomKilled) {
      byte[] line = ("\n" + CommandResult.OOM_MESSAGE + "\n").getBytes(StandardCharsets.UTF_8);
      append(Channel.STDERR, line, 0, line.length);
      reason = Optional.of(CommandResult.OOM_MESSAGE + error.map(e -> "; " + e).orElse(""));
    }
    finish(
        new CommandResult(
            exitCode,
            timedOut,
            truncated(Channel.STDOUT),
            truncated(Channel.STDERR),
            reason,
            sessionReset,
            java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos),
            oomKilled));
  }

  /** Appends a line of the agent's own to stderr, past the cap if need be. */
  private void note(String line) {
    byte[] bytes = ("\n" + line + "\n").getBytes(StandardCharsets.UTF_8);
    synchronized (this) {
      if (!finished) {
        stderr.write(bytes, 0, bytes.length, true);
      }
    }
  }

  /** Whether the cgroup's OOM kill count rose since the start (false when it is unreadable). */
  private boolean oomKillCounted() {
    OptionalLong before;
    synchronized (this) {
      before = oomKillsAtStart;
    }
    OptionalLong after = oomKills.read();
    return before.isPresent() && after.isPresent() && after.getAsLong() > before.getAsLong();
  }

  /**
   * Cuts pending output into events of at most MAX_CHUNK per channel and adds them to the log in
   * order (under this lock, so no poller can see order N+1 before N). Without an outcome only whole
   * characters are cut and nothing when nothing is pending; with one, everything is cut and the
   * last event carries the outcome. Returns whether any event was added.
   */
  private boolean cut(Optional<CommandResult> outcome) {
    boolean everything = outcome.isPresent();
    boolean added = false;
    while (true) {
      Range out = stdout.take(everything);
      Range err = stderr.take(everything);
      boolean more =
          everything
              ? stdout.pending() > 0 || stderr.pending() > 0
              : stdout.pending() >= MAX_CHUNK || stderr.pending() >= MAX_CHUNK;
      if (!everything && out.length() == 0 && err.length() == 0) {
        break;
      }
      var event =
          new BashEvent.Output(this, nextOrder++, out, err, more ? Optional.empty() : outcome);
      events.add(event);
      log.add(event);
      added = true;
      if (!more) {
        break;
      }
    }
    lastSealNanos = System.nanoTime();
    return added;
  }

  synchronized boolean truncated(Channel channel) {
    return spool(channel).truncated;
  }

  synchronized long bytesKept(Channel channel) {
    return spool(channel).kept;
  }

  /**
   * The first bytes of a channel, at most {@code maxBytes} and cut at a character boundary (the
   * reply of {@code execute_bash_command}, capped apart from the events).
   */
  synchronized Range head(Channel channel, long maxBytes) {
    Spool spool = spool(channel);
    if (spool.kept <= maxBytes) {
      return new Range(0, spool.kept);
    }
    return new Range(0, spool.boundary(maxBytes, 1));
  }

  synchronized List<BashEvent> events() {
    return List.copyOf(events);
  }

  synchronized void forget(BashEvent event) {
    events.remove(event);
  }

  /** Keeps the spool files, whatever retention drops, until the matching {@link #unpin}. */
  synchronized void pin() {
    pins++;
  }

  synchronized void unpin() {
    pins--;
  }

  /** True once finished, out of the history and unpinned: its spool files may go. */
  synchronized boolean forgotten() {
    return finished && events.isEmpty() && pins == 0;
  }

  /** Deletes the spool files; the record must no longer be reachable from any event. */
  void deleteSpool() {
    try {
      Files.deleteIfExists(stdout.path);
      Files.deleteIfExists(stderr.path);
    } catch (IOException e) {
      // Left for the directory cleanup at shutdown.
    }
  }

  long spoolBytes() {
    return bytesKept(Channel.STDOUT) + bytesKept(Channel.STDERR);
  }

  /** Writes {@code range} of a channel as a JSON string (null when empty), decoding UTF-8. */
  void writeText(JsonGenerator g, Channel channel, Range range) throws IOException {
    if (range.length() == 0) {
      g.writeNull();
      return;
    }
    Reader opened;
    try {
      opened = reader(channel, range);
    } catch (NoSuchFileException e) {
      // Retention released this command while its event was being written: the text is gone,
      // and a null keeps the response well-formed.
      g.writeNull();
      return;
    }
    try (Reader reader = opened) {
      g.writeString(reader, -1);
    }
  }

  /** A reader over a spooled range, with malformed bytes replaced rather than rejected. */
  Reader reader(Channel channel, Range range) throws IOException {
    FileChannel file = FileChannel.open(spool(channel).path, StandardOpenOption.READ);
    file.position(range.offset());
    var decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
    var limited =
        new java.io.FilterInputStream(Channels.newInputStream(file)) {
          private long left = range.length();

          @Override
          public int read() throws IOException {
            if (left <= 0) {
              return -1;
            }
            int b = super.read();
            if (b >= 0) {
              left--;
            }
            return b;
          }

          @Override
          public int read(byte[] b, int off, int len) throws IOException {
            if (left <= 0) {
              return -1;
            }
            int n = super.read(b, off, (int) Math.min(len, left));
            if (n > 0) {
              left -= n;
            }
            return n;
          }
        };
    return new InputStreamReader(limited, decoder);
  }

  private Spool spool(Channel channel) {
    return channel == Channel.STDOUT ? stdout : stderr;
  }

  /** A byte range of one channel's spool file. */
  record Range(long offset, long length) {
    static final Range EMPTY = new Range(0, 0);
  }

  /** One channel's spool: a file written up to the cap, plus what has been cut into events. */
  private final class Spool {
    final Path path;
    FileChannel file;
    long kept;
    long sealed;
    boolean truncated;
    long cap = CommandRecord.this.cap;
    final byte[] tail = new byte[4];
    int tailLength;

    Spool(Path path) {
      this.path = path;
    }

    long pending() {
      return kept - sealed;
    }

    /** Writes up to the cap ({@code past}: all of it), never keeping half a character there. */
    void write(byte[] data, int offset, int length, boolean past) {
      long room = past ? length : cap - kept;
      int take = (int) Math.min(room, length);
      if (take < length) {
        truncated = true;
        take = Math.max(0, take - Utf8.incompleteTail(data, offset, Math.max(0, take)));
        cap = kept + take; // Nothing later may fill the character-sized gap.
      }
      if (take <= 0) {
        return;
      }
      try {
        if (file == null) {
          Files.createDirectories(spoolDir);
          file =
              FileChannel.open(
                  path,
                  StandardOpenOption.CREATE,
                  StandardOpenOption.TRUNCATE_EXISTING,
                  StandardOpenOption.WRITE);
        }
        var buffer = java.nio.ByteBuffer.wrap(data, offset, take);
        while (buffer.hasRemaining()) {
          file.write(buffer);
        }
      } catch (IOException e) {
        truncated = true;
        return;
      }
      kept += take;
      remember(data, offset, take);
    }

    private void remember(byte[] data, int offset, int length) {
      if (length >= 4) {
        System.arraycopy(data, offset + length - 4, tail, 0, 4);
        tailLength = 4;
        return;
      }
      int keep = Math.min(tailLength, 4 - length);
      System.arraycopy(tail, tailLength - keep, tail, 0, keep);
      System.arraycopy(data, offset, tail, keep, length);
      tailLength = keep + length;
    }

    /** Takes the next range to seal: whole characters only unless this is the final cut. */
    Range take(boolean everything) {
      long end = Math.min(kept, sealed + MAX_CHUNK);
      if (end < kept) {
        end = boundary(end, sealed + 1);
      } else if (!everything) {
        end -= Utf8.incompleteTail(tail, 0, tailLength);
      }
      if (end <= sealed) {
        return Range.EMPTY;
      }
      Range range = new Range(sealed, end - sealed);
      sealed = end;
      return range;
    }

    /**
     * The character boundary at or just before {@code position} (which is inside the kept bytes): a
     * chunk cut there never ends in half a character. {@code position} itself when the bytes cannot
     * be read or are not UTF-8 there.
     */
    long boundary(long position, long floor) {
      long from = Math.max(floor, position - 3);
      if (from > position) {
        return position;
      }
      var bytes = java.nio.ByteBuffer.allocate((int) (position + 1 - from));
      // Its own channel: the writer's may already be closed (a reply read after the end).
      try (FileChannel reader = FileChannel.open(path, StandardOpenOption.READ)) {
        while (bytes.hasRemaining() && reader.read(bytes, from + bytes.position()) > 0) {
          // Positional reads until the few bytes are in.
        }
      } catch (IOException e) {
        return position;
      }
      for (int i = bytes.position() - 1; i >= 0; i--) {
        if ((bytes.get(i) & 0xC0) != 0x80) {
          return from + i; // Not a continuation byte: a character starts here.
        }
      }
      return position;
    }

    void close() {
      if (file != null) {
        try {
          file.close();
        } catch (IOException e) {
          // Nothing useful to do: the data written so far is readable.
        }
      }
    }
  }
}
