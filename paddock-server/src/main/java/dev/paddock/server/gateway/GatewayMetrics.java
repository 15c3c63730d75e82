package dev.paddock.server.gateway;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The gateway's counters, labelled by route template ({@code /sandboxes/{id}/agent/*}, never a
 * sandbox id or a path): requests by status, bytes relayed, open WebSockets (tunnels), upstream
 * errors. Thread-safe (adders and a concurrent map whose keys are few and fixed by the templates).
 */
final class GatewayMetrics {
  private final Map<String, LongAdder> requests = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> upstreamErrors = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> openSockets = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> resumes = new ConcurrentHashMap<>();
  private final LongAdder bytes = new LongAdder();

  void replied(String template, int status) {
    requests.computeIfAbsent(template + "\u0000" + status, k -> new LongAdder()).increment();
  }

  void upstreamError(String template) {
    upstreamErrors.computeIfAbsent(template, k -> new LongAdder()).increment();
  }

  void webSocketOpened(String template) {
    openSockets.computeIfAbsent(template, k -> new LongAdder()).increment();
  }

  void webSocketClosed(String template) {
    openSockets.computeIfAbsent(template, k -> new LongAdder()).decrement();
  }

  void resumed(String template) {
    resumes.computeIfAbsent(template, k -> new LongAdder()).increment();
  }

  void bytes(long n) {
    bytes.add(n);
  }

  /** Prometheus text exposition of these counters. */
  String scrape() {
    StringBuilder out = new StringBuilder(1024);
    out.append("# HELP paddock_gateway_requests_total Requests the gateway answered.\n")
        .append("# TYPE paddock_gateway_requests_total counter\n");
    new TreeMap<>(requests)
        .forEach(
            (key, n) -> {
              int split = key.indexOf('\u0000');
              out.append("paddock_gateway_requests_total{route=\"")
                  .append(key, 0, split)
                  .append("\",status=\"")
                  .append(key.substring(split + 1))
                  .append("\"} ")
                  .append(n.sum())
                  .append('\n');
            });
    series(
        out,
        "paddock_gateway_upstream_errors_total",
        "counter",
        "Upstream failures.",
        upstreamErrors);
    series(
        out,
        "paddock_gateway_websockets_open",
        "gauge",
        "Relayed upgraded connections open.",
        openSockets);
    series(
        out,
        "paddock_gateway_auto_resumes_total",
        "counter",
        "Requests that waited for an auto-resume of their sandbox and were then forwarded.",
        resumes);
    out.append("# HELP paddock_gateway_bytes_total Reply and tunnel bytes relayed.\n")
        .append("# TYPE paddock_gateway_bytes_total counter\n")
        .append("paddock_gateway_bytes_total ")
        .append(bytes.sum())
        .append('\n');
    return out.toString();
  }

  private static void series(
      StringBuilder out, String name, String type, String help, Map<String, LongAdder> values) {
    out.append("# HELP ").append(name).append(' ').append(help).append('\n');
    out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    new TreeMap<>(values)
        .forEach(
            (route, n) ->
                out.append(name)
                    .append("{route=\"")
                    .append(route)
                    .append("\"} ")
                    .append(n.sum())
                    .append('\n'));
  }
}
