package dev.paddock.backend.process;

import dev.paddock.backend.kit.protocol.ReadyLine;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;

/**
 * Drains an agent's merged standard output and error on one platform thread ({@code
 * paddock-agent-output-<id>}) until EOF. It completes {@link #ready()} with the port from the
 * agent's ready line ({@code paddock agent-server listening on http://HOST:PORT ...}), copies
 * everything to {@code agent.log} up to a byte limit (then keeps draining, so the agent never
 * blocks on a full pipe), and keeps the last lines in memory for start-failure diagnostics. The log
 * holds raw detail for operators; it is never shown to users.
 */
final class AgentOutput {
  private static final int MAX_LINE = 4096;
  private static final int TAIL_LINES = 20;

  private final CompletableFuture<OptionalInt> ready = new CompletableFuture<>();
  private final ArrayDeque<String> tail = new ArrayDeque<>(); // guarded by itself
  private final InputStream in;
  private final Path log;
  private final long maxLogBytes;
  private final Thread thread;
  private long logged;

  private AgentOutput(String sandboxId, InputStream in, Path log, long maxLogBytes) {
    this.in = in;
    this.log = log;
    this.maxLogBytes = maxLogBytes;
    this.thread =
        Thread.ofPlatform()
            .daemon()
            .stackSize(256 << 10)
            .name("paddock-agent-output-" + sandboxId)
            .unstarted(this::drain);
  }

  /** Starts draining {@code in} into {@code log}. */
  static AgentOutput start(String sandboxId, InputStream in, Path log, long maxLogBytes) {
    AgentOutput output = new AgentOutput(sandboxId, in, log, maxLogBytes);
    output.thread.start();
    return output;
  }

  /** The agent's port once it printed its ready line; empty when its output ended first. */
  CompletableFuture<OptionalInt> ready() {
    return ready;
  }

  /** The last lines the agent printed (at most 20), oldest first. */
  List<String> tail() {
    synchronized (tail) {
      return List.copyOf(tail);
    }
  }

  /** Waits up to {@code timeout} for the output to end; whether it did. Keeps the interrupt. */
  boolean awaitEnd(Duration timeout) {
    try {
      return thread.join(timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void drain() {
    try (InputStream input = in;
        OutputStream file = openLog()) {
      byte[] buffer = new byte[8192];
      LineSplitter lines = new LineSplitter(MAX_LINE, this::line);
      for (int n; (n = input.read(buffer)) >= 0; ) {
        copyToLog(file, buffer, n);
        lines.accept(buffer, n);
      }
      lines.finish();
    } catch (IOException e) {
      // The pipe broke (agent killed) or the log went away with the directory: nothing to keep.
    } finally {
      ready.complete(OptionalInt.empty());
    }
  }

  private OutputStream openLog() throws IOException {
    return Files.newOutputStream(
        log, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
  }

  private void copyToLog(OutputStream file, byte[] buffer, int n) throws IOException {
    if (logged >= maxLogBytes) {
      return;
    }
    int keep = (int) Math.min(n, maxLogBytes - logged);
    file.write(buffer, 0, keep);
    logged += keep;
    if (logged >= maxLogBytes) {
      file.write("\n[paddock: agent.log truncated here]\n".getBytes(StandardCharsets.US_ASCII));
    }
    file.flush();
  }

  private void line(String text) {
    if (!ready.isDone()) {
      readyPort(text).ifPresent(port -> ready.complete(OptionalInt.of(port)));
    }
    synchronized (tail) {
      if (tail.size() == TAIL_LINES) {
        tail.removeFirst();
      }
      tail.addLast(text);
    }
  }

  /**
   * Up to {@code maxBytes} of {@code log} from {@code offset} on (empty array past its end); empty
   * when the file is gone.
   */
  static Optional<byte[]> read(Path log, long offset, int maxBytes) {
    try (java.nio.channels.FileChannel file = java.nio.channels.FileChannel.open(log)) {
      long left = Math.max(0, file.size() - offset);
      java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate((int) Math.min(left, maxBytes));
      while (buffer.hasRemaining() && file.read(buffer, offset + buffer.position()) > 0) {
        // reads until the buffer is full or the file ends
      }
      return Optional.of(java.util.Arrays.copyOf(buffer.array(), buffer.position()));
    } catch (IOException e) {
      return Optional.empty(); // the sandbox directory is gone
    }
  }

  /** The port of a ready line. */
  static Optional<Integer> readyPort(String line) {
    return ReadyLine.parse(line).map(ReadyLine::port);
  }
}
