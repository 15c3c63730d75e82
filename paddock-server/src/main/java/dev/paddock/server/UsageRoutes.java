package dev.paddock.server;

import dev.paddock.api.Caller;
import dev.paddock.api.LogChunk;
import dev.paddock.api.SandboxStats;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.Router;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@code GET /api/v1/sandboxes/{id}/stats} (one reading of a RUNNING sandbox's resource use) and
 * {@code GET /api/v1/sandboxes/{id}/logs[?follow=true]} (its kept log, also after delete; with
 * {@code follow} the reply streams new lines until the sandbox ends or the client goes away).
 * Owner-scoped: another user's sandbox is "not found".
 */
final class UsageRoutes {
  /** How often a follow looks for new lines. */
  private static final Duration FOLLOW_EVERY = Duration.ofMillis(250);

  private final Observability observability;
  private final Authenticator auth;

  UsageRoutes(Observability observability, Authenticator auth) {
    this.observability = observability;
    this.auth = auth;
  }

  void register(Router router) {
    router
        .add("GET", "/api/v1/sandboxes/{id}/stats", Failures.mapped(this::stats))
        .add("GET", "/api/v1/sandboxes/{id}/logs", Failures.mapped(this::logs));
  }

  private void stats(Call call) throws IOException {
    call.allowQuery(Set.of());
    Caller caller = auth.require(call).caller();
    String id = call.pathParam("id");
    SandboxStats stats =
        observability
            .usage()
            .stats(caller, id)
            .orElseThrow(() -> HttpError.notFound("no sandbox " + id));
    call.sendJson(200, view(stats));
  }

  /** The reply shape: a field the backend could not read is absent, never zero. */
  static Map<String, Object> view(SandboxStats s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("sandbox_id", s.sandboxId());
    m.put("read_at", Views.time(s.readAt()));
    put(m, "cpu_seconds", s.cpuSeconds());
    put(m, "cpu_percent", s.cpuPercent());
    put(m, "memory_bytes", s.memoryBytes());
    put(m, "memory_peak_bytes", s.memoryPeakBytes());
    put(m, "pids", s.pids());
    put(m, "disk_bytes", s.diskBytes());
    put(m, "network_rx_bytes", s.networkRxBytes());
    put(m, "network_tx_bytes", s.networkTxBytes());
    return m;
  }

  private static void put(Map<String, Object> m, String name, OptionalDouble value) {
    value.ifPresent(v -> m.put(name, Math.round(v * 1000) / 1000.0));
  }

  private static void put(Map<String, Object> m, String name, OptionalLong value) {
    value.ifPresent(v -> m.put(name, v));
  }

  private void logs(Call call) throws IOException {
    call.allowQuery(Set.of("follow"));
    Caller caller = auth.require(call).caller();
    String id = call.pathParam("id");
    boolean follow = call.queryBoolean("follow").orElse(false);
    LogChunk first = read(caller, id, 0).orElseThrow(() -> HttpError.notFound("no log of " + id));
    try (OutputStream out = call.stream(200, "text/plain; charset=utf-8", 0)) {
      LogChunk chunk = first;
      while (true) {
        out.write(chunk.bytes());
        out.flush();
        if (chunk.bytes().length == 0 && (chunk.ended() || !follow)) {
          return;
        }
        if (chunk.bytes().length == 0 && !pause()) {
          return; // the server is closing
        }
        Optional<LogChunk> next = read(caller, id, chunk.nextOffset());
        if (next.isEmpty()) {
          return; // its log was pruned meanwhile
        }
        chunk = next.get();
      }
    }
  }

  private Optional<LogChunk> read(Caller caller, String id, long offset) {
    return observability.logs().read(caller, id, offset);
  }

  /** Waits until the next look for lines; false when interrupted (the server is closing). */
  private static boolean pause() {
    try {
      TimeUnit.NANOSECONDS.sleep(FOLLOW_EVERY.toNanos());
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
