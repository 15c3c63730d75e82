package dev.paddock.agent.search;

import dev.paddock.http.Call;
import dev.paddock.http.Json;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;
import java.util.Map;

/**
 * A streamed {@code application/x-ndjson} reply: one JSON object per line, buffered and flushed at
 * most every {@link #FLUSH_NANOS} (and at the end), so a search finding thousands of lines does not
 * send thousands of tiny chunks while a slow one still shows results as they come. Thread-safe: the
 * workers of one search write through it; a batch of lines is written under one lock, so the lines
 * of one file stay together.
 */
final class NdjsonOut implements AutoCloseable {
  private static final long FLUSH_NANOS = 50_000_000;

  private final Call call;
  private OutputStream out;
  private long lastFlush = System.nanoTime();

  NdjsonOut(Call call) {
    this.call = call;
  }

  synchronized void write(List<Map<String, Object>> lines) throws IOException {
    if (out == null) {
      out = new BufferedOutputStream(call.stream(200, "application/x-ndjson", 0), 1 << 16);
    }
    for (Map<String, Object> line : lines) {
      out.write(Json.bytes(line));
      out.write('\n');
    }
    if (System.nanoTime() - lastFlush > FLUSH_NANOS) {
      out.flush();
      lastFlush = System.nanoTime();
    }
  }

  /** Writes the last line and ends the reply. */
  synchronized void finish(Map<String, Object> summary) throws IOException {
    write(List.of(summary));
    out.close();
  }

  @Override
  public synchronized void close() throws IOException {
    if (out != null) {
      out.close();
    }
  }
}
