package dev.paddock.server;

import dev.paddock.api.SandboxStatus;
import dev.paddock.store.QueueEntry;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

/**
 * The control plane's Prometheus metrics, in the text exposition format (no client library: four
 * metric families do not need one). Thread-safe; counters are lock-free.
 */
public final class Metrics {
  /** Upper bounds (seconds) of the start-latency histogram buckets. */
  private static final double[] START_BUCKETS = {0.1, 0.2, 0.3, 0.5, 1, 2, 5, 10, 30, 60, 120};

  private final AtomicLong[] startBuckets = new AtomicLong[START_BUCKETS.length];
  private final LongAdder startCount = new LongAdder();
  private final DoubleAdder startSum = new DoubleAdder();
  private final Map<String, LongAdder> startFailures = new ConcurrentHashMap<>();
  private final Map<RequestKey, LongAdder> requests = new ConcurrentHashMap<>();
  private final AtomicLong[] queueBuckets = new AtomicLong[START_BUCKETS.length];
  private final LongAdder queueCount = new LongAdder();
  private final DoubleAdder queueSum = new DoubleAdder();
  private final LongAdder queueTimeouts = new LongAdder();

  /** The route label of a request that matched no route: one series, whatever the path. */
  static final String UNMATCHED = "unmatched";

  /** Methods counted by name; any other is counted as {@code OTHER}. */
  private static final Set<String> METHODS =
      Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");

  private record RequestKey(String method, String route, String code) {}

  public Metrics() {
    for (int i = 0; i < startBuckets.length; i++) {
      startBuckets[i] = new AtomicLong();
      queueBuckets[i] = new AtomicLong();
    }
  }

  /** A sandbox became RUNNING this many seconds after it was created. */
  public void startSucceeded(double seconds) {
    startCount.increment();
    startSum.add(seconds);
    for (int i = 0; i < START_BUCKETS.length; i++) {
      if (seconds <= START_BUCKETS[i]) {
        startBuckets[i].incrementAndGet();
      }
    }
  }

  /** A create waited this many seconds in the start queue, then got its slot. */
  public void queueAdmitted(double seconds) {
    queueCount.increment();
    queueSum.add(seconds);
    for (int i = 0; i < START_BUCKETS.length; i++) {
      if (seconds <= START_BUCKETS[i]) {
        queueBuckets[i].incrementAndGet();
      }
    }
  }

  /** A create gave up waiting in the start queue (its queue timeout passed). */
  public void queueTimedOut() {
    queueTimeouts.increment();
  }

  /** A start failed with this failure class (e.g. {@code EXITED}). */
  public void startFailed(String failureClass) {
    startFailures.computeIfAbsent(failureClass, k -> new LongAdder()).increment();
  }

  /**
   * Counts a request. {@code route} must be a route template or {@link #UNMATCHED}, never a raw
   * path: with the method and status folded to fixed sets, the series stay bounded by the routes.
   */
  void request(String method, String route, int status) {
    String code = status >= 100 && status <= 599 ? Integer.toString(status) : "other";
    String knownMethod = METHODS.contains(method) ? method : "OTHER";
    requests
        .computeIfAbsent(new RequestKey(knownMethod, route, code), k -> new LongAdder())
        .increment();
  }

  /** The exposition text. Sandbox counts come from the store at scrape time. */
  String scrape(SandboxStore store) {
    StringBuilder out = new StringBuilder(2048);
    Map<SandboxStatus, Integer> byStatus = new EnumMap<>(SandboxStatus.class);
    for (SandboxStatus status : SandboxStatus.values()) {
      byStatus.put(status, 0);
    }
    List<SandboxRecord> records = store.withStatus(List.of(SandboxStatus.values()));
    for (SandboxRecord record : records) {
      byStatus.merge(record.status(), 1, Integer::sum);
    }
    out.append("# HELP paddock_sandboxes Sandboxes by last recorded status.\n");
    out.append("# TYPE paddock_sandboxes gauge\n");
    byStatus.forEach(
        (status, n) ->
            out.append("paddock_sandboxes{status=\"")
                .append(escape(status.name()))
                .append("\"} ")
                .append(n)
                .append('\n'));
    out.append("# HELP paddock_sandbox_start_seconds Time from create to RUNNING.\n");
    out.append("# TYPE paddock_sandbox_start_seconds histogram\n");
    for (int i = 0; i < START_BUCKETS.length; i++) {
      out.append("paddock_sandbox_start_seconds_bucket{le=\"")
          .append(START_BUCKETS[i])
          .append("\"} ")
          .append(startBuckets[i].get())
          .append('\n');
    }
    out.append("paddock_sandbox_start_seconds_bucket{le=\"+Inf\"} ")
        .append(startCount.sum())
        .append('\n');
    out.append("paddock_sandbox_start_seconds_sum ").append(startSum.sum()).append('\n');
    out.append("paddock_sandbox_start_seconds_count ").append(startCount.sum()).append('\n');
    out.append("# HELP paddock_sandbox_start_failures_total Failed starts by failure class.\n");
    out.append("# TYPE paddock_sandbox_start_failures_total counter\n");
    startFailures.forEach(
        (kind, n) ->
            out.append("paddock_sandbox_start_failures_total{class=\"")
                .append(escape(kind))
                .append("\"} ")
                .append(n.sum())
                .append('\n'));
    queue(out, store);
    out.append("# HELP paddock_http_requests_total Requests by route and status code.\n");
    out.append("# TYPE paddock_http_requests_total counter\n");
    requests.forEach(
        (key, n) ->
            out.append("paddock_http_requests_total{method=\"")
                .append(escape(key.method()))
                .append("\",route=\"")
                .append(escape(key.route()))
                .append("\",code=\"")
                .append(escape(key.code()))
                .append("\"} ")
                .append(n.sum())
                .append('\n'));
    return out.toString();
  }

  /** The start queue: its length and oldest wait (from the store), waits and timeouts (here). */
  private void queue(StringBuilder out, SandboxStore store) {
    List<QueueEntry> queued = store.queue();
    double oldest =
        queued.stream()
            .map(QueueEntry::enqueuedAt)
            .min(Instant::compareTo)
            .map(t -> Math.max(0, Duration.between(t, Instant.now()).toMillis() / 1000.0))
            .orElse(0.0);
    out.append("# HELP paddock_queue_length Creates waiting in the start queue (all replicas).\n");
    out.append("# TYPE paddock_queue_length gauge\n");
    out.append("paddock_queue_length ").append(queued.size()).append('\n');
    out.append("# HELP paddock_queue_oldest_wait_seconds How long the oldest waiting create has");
    out.append(" waited.\n# TYPE paddock_queue_oldest_wait_seconds gauge\n");
    out.append("paddock_queue_oldest_wait_seconds ").append(oldest).append('\n');
    out.append("# HELP paddock_queue_wait_seconds Time admitted creates waited in the queue.\n");
    out.append("# TYPE paddock_queue_wait_seconds histogram\n");
    for (int i = 0; i < START_BUCKETS.length; i++) {
      out.append("paddock_queue_wait_seconds_bucket{le=\"")
          .append(START_BUCKETS[i])
          .append("\"} ")
          .append(queueBuckets[i].get())
          .append('\n');
    }
    out.append("paddock_queue_wait_seconds_bucket{le=\"+Inf\"} ")
        .append(queueCount.sum())
        .append('\n');
    out.append("paddock_queue_wait_seconds_sum ").append(queueSum.sum()).append('\n');
    out.append("paddock_queue_wait_seconds_count ").append(queueCount.sum()).append('\n');
    out.append("# HELP paddock_queue_timeouts_total Creates that gave up waiting in the queue.\n");
    out.append("# TYPE paddock_queue_timeouts_total counter\n");
    out.append("paddock_queue_timeouts_total ").append(queueTimeouts.sum()).append('\n');
  }

  /**
   * A label value as the text exposition format requires: backslash, double quote and line feed
   * escaped (https://prometheus.io/docs/instrumenting/exposition_formats/).
   */
  static String escape(String value) {
    StringBuilder out = new StringBuilder(value.length());
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '\\' -> out.append("\\\\");
        case '"' -> out.append("\\\"");
        case '\n' -> out.append("\\n");
        default -> out.append(c);
      }
    }
    return out.toString();
  }
}
