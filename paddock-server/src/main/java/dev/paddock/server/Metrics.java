package dev.paddock.server;

import dev.paddock.api.SandboxStatus;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
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
  private final Map<String, LongAdder> requests = new ConcurrentHashMap<>();

  public Metrics() {
    for (int i = 0; i < startBuckets.length; i++) {
      startBuckets[i] = new AtomicLong();
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

  /** A start failed with this failure class (e.g. {@code EXITED}). */
  public void startFailed(String failureClass) {
    startFailures.computeIfAbsent(failureClass, k -> new LongAdder()).increment();
  }

  void request(String method, String route, int status) {
    requests
        .computeIfAbsent(method + "\u0000" + route + "\u0000" + status, k -> new LongAdder())
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
                .append(status)
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
                .append(kind)
                .append("\"} ")
                .append(n.sum())
                .append('\n'));
    out.append("# HELP paddock_http_requests_total Requests by route and status code.\n");
    out.append("# TYPE paddock_http_requests_total counter\n");
    requests.forEach(
        (key, n) -> {
          String[] parts = key.split("\u0000");
          out.append("paddock_http_requests_total{method=\"")
              .append(parts[0])
              .append("\",route=\"")
              .append(parts[1])
              .append("\",code=\"")
              .append(parts[2])
              .append("\"} ")
              .append(n.sum())
              .append('\n');
        });
    return out.toString();
  }

  /** The route template of a path, so metrics do not grow one series per sandbox id. */
  static String route(String path) {
    String[] parts = path.split("/", -1);
    StringBuilder route = new StringBuilder();
    for (int i = 1; i < parts.length; i++) {
      String part = parts[i];
      boolean variable =
          (i == 4 && path.startsWith("/api/v1/sandboxes/") && !part.equals("search"))
              || (i == 5 && path.startsWith("/api/v1/webhooks/events/"))
              || (i == 4 && path.startsWith("/api/v1/users/") && !part.equals("me"))
              || (i == 6 && path.startsWith("/api/v1/users/"))
              || (i == 4 && path.startsWith("/api/v1/archives/"));
      route.append('/').append(variable ? "{id}" : part);
    }
    return route.length() == 0 ? "/" : route.toString();
  }
}
