package dev.paddock.agent.bash;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.paddock.http.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * Follows the event history from a position: first the retained events after it, then each new one
 * as it is logged, in log order, each exactly once. The position is the log's sequence number,
 * which clients see as a frame's {@code order}: a reader that reconnects with the last order it saw
 * gets exactly the rest, including what was logged while it was away, as long as the history still
 * holds it (else a gap frame says which orders are gone). Pull-based: a slow reader holds nothing
 * but its position, and cannot slow down commands or other readers.
 *
 * <p>Frames (one JSON object each, an NDJSON line or a WebSocket text message): {@code
 * {"type":"event","order":N,"event":{...}}}, {@code {"type":"gap","from_order":A,"to_order":B}},
 * and {@code {"type":"heartbeat"}} after {@link #HEARTBEAT} without events.
 */
final class EventFeed {
  /** How long a quiet feed waits before it sends a heartbeat (which also finds dead readers). */
  static final Duration HEARTBEAT = Duration.ofSeconds(15);

  private static final int BATCH = 64;

  /** Paddock's frames (with order, gaps, heartbeats), or OpenHands' (the bare event JSON). */
  enum Format {
    PADDOCK,
    OPENHANDS
  }

  /** Where frames go; an exception ends the feed. */
  interface Sink {
    void send(byte[] frame) throws IOException;
  }

  private final EventLog log;

  EventFeed(EventLog log) {
    this.log = log;
  }

  /** The order of the newest event logged so far (-1 before the first). */
  long lastOrder() {
    return log.nextSeq() - 1;
  }

  /**
   * Sends every event after {@code afterOrder} that {@code filter} accepts, then follows the log,
   * until {@code endsAfter} accepts a sent event, {@code stop} has completed and everything logged
   * before is sent, or the sink fails.
   *
   * @param format the frames to send; OpenHands' carry neither gaps nor heartbeats
   * @param reportGaps whether events missing right after {@code afterOrder} are reported (a reader
   *     starting from scratch asked for what is retained, and misses nothing it knew of)
   */
  void follow(
      long afterOrder,
      boolean reportGaps,
      Predicate<BashEvent> filter,
      Predicate<BashEvent> endsAfter,
      CompletableFuture<?> stop,
      Format format,
      Sink sink)
      throws IOException, InterruptedException {
    boolean paddock = format == Format.PADDOCK;
    long last = afterOrder;
    boolean gaps = reportGaps;
    while (true) {
      CompletableFuture<Void> changed = log.changed();
      List<BashEvent> batch = log.after(last, BATCH);
      if (batch.isEmpty()) {
        if (stop.isDone()) {
          return;
        }
        if (!await(changed, stop) && paddock) {
          sink.send(HEARTBEAT_FRAME);
        }
        continue;
      }
      for (BashEvent event : batch) {
        if (gaps && paddock && event.seq() > last + 1) {
          sink.send(gapFrame(last + 1, event.seq() - 1));
        }
        gaps = true;
        last = event.seq();
        if (filter.test(event)) {
          sink.send(paddock ? eventFrame(event) : plain(event));
          if (endsAfter.test(event)) {
            return;
          }
        }
      }
    }
  }

  /** Waits for news or the stop; false when the heartbeat interval passed without either. */
  private static boolean await(CompletableFuture<Void> changed, CompletableFuture<?> stop)
      throws InterruptedException {
    try {
      CompletableFuture.anyOf(changed, stop).get(HEARTBEAT.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      return true;
    }
  }

  private static final byte[] HEARTBEAT_FRAME =
      "{\"type\":\"heartbeat\"}".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  static byte[] gapFrame(long from, long to) {
    return ("{\"type\":\"gap\",\"from_order\":" + from + ",\"to_order\":" + to + "}")
        .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  }

  static byte[] eventFrame(BashEvent event) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (JsonGenerator g = Json.generator(out)) {
      g.writeStartObject();
      g.writeStringField("type", "event");
      g.writeNumberField("order", event.seq());
      g.writeFieldName("event");
      event.write(g);
      g.writeEndObject();
    }
    return out.toByteArray();
  }

  /** The event alone, as OpenHands' bash-events socket sends it. */
  static byte[] plain(BashEvent event) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (JsonGenerator g = Json.generator(out)) {
      event.write(g);
    }
    return out.toByteArray();
  }
}
