package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.client.PaddockClient;
import dev.paddock.http.Json;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code GET /api/v1/sandboxes/{id}/stats} and the per-sandbox series of {@code /metrics}, read
 * from real agent processes of the process backend (issue 13, point 4).
 */
class UsageApiTest {
  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(HttpResponse<String> response) {
    return (Map<String, Object>) Json.parseAny(response.body().getBytes(StandardCharsets.UTF_8));
  }

  private static PaddockClient client(ControlPlane plane) {
    return PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY);
  }

  private static SandboxInfo running(ControlPlane plane) {
    return client(plane).create(Optional.empty(), true, Duration.ofSeconds(60));
  }

  @Nested
  class Stats {
    @RegisterExtension final ControlPlane plane = new ControlPlane();

    @Test
    void statsOfARunningSandboxShowItsMemoryPidsCpuAndWorkspaceBytes() throws Exception {
      SandboxInfo sandbox = running(plane);
      client(plane).agent(sandbox).exec("head -c 300000 /dev/zero > big.bin", 30, s -> {}, s -> {});

      HttpResponse<String> response =
          plane.admin("GET", "/api/v1/sandboxes/" + sandbox.id() + "/stats", null);

      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      Map<String, Object> stats = object(response);
      assertThat(stats).containsEntry("sandbox_id", sandbox.id()).containsKey("read_at");
      assertThat(((Number) stats.get("memory_bytes")).longValue())
          .as("an agent JVM uses more than 16 MiB")
          .isGreaterThan(16L << 20);
      assertThat(((Number) stats.get("pids")).longValue()).isPositive();
      assertThat(((Number) stats.get("cpu_seconds")).doubleValue()).isPositive();
      assertThat(((Number) stats.get("disk_bytes")).longValue()).isGreaterThanOrEqualTo(300_000);
      assertThat(stats)
          .as("the process backend shares the host's network: absent, not zero")
          .doesNotContainKeys("network_rx_bytes", "network_tx_bytes");
    }

    @Test
    void currentCpuFollowsABusyLoopBetweenTwoReadings() {
      SandboxInfo sandbox = running(plane);
      var agent = client(plane).agent(sandbox);
      var busy =
          java.util.concurrent.CompletableFuture.runAsync(
              () ->
                  agent.exec(
                      "end=$(( $(date +%s) + 8 )); while [ $(date +%s) -lt $end ]; do :; done",
                      30, s -> {}, s -> {}));

      Awaitility.await("a busy loop shows as CPU use now")
          .atMost(Duration.ofSeconds(8))
          .pollInterval(Duration.ofMillis(500))
          .untilAsserted(
              () ->
                  assertThat(client(plane).stats(sandbox.id()).cpuPercent().orElse(0))
                      .isGreaterThan(30));
      busy.join();

      Awaitility.await("and falls when the loop ended")
          .atMost(Duration.ofSeconds(15))
          .pollInterval(Duration.ofMillis(500))
          .untilAsserted(
              () ->
                  assertThat(client(plane).stats(sandbox.id()).cpuPercent().orElse(100))
                      .isLessThan(20));
    }

    @Test
    void statsOfAPausedSandboxAre409SayingItIsPaused() throws Exception {
      SandboxInfo sandbox = running(plane);
      client(plane).pause(sandbox.id());

      HttpResponse<String> response =
          plane.admin("GET", "/api/v1/sandboxes/" + sandbox.id() + "/stats", null);

      assertThat(response.statusCode()).isEqualTo(409);
      assertThat((String) object(response).get("detail")).contains("PAUSED").contains("RUNNING");
    }

    @Test
    void statsOfAnUnknownOrAnotherUsersSandboxAre404() throws Exception {
      SandboxInfo sandbox = running(plane);
      var bob = client(plane).createUser("bob", false);

      assertThat(plane.admin("GET", "/api/v1/sandboxes/nope/stats", null).statusCode())
          .isEqualTo(404);
      assertThat(
              plane
                  .send(
                      "GET",
                      "/api/v1/sandboxes/" + sandbox.id() + "/stats",
                      Optional.of(bob.apiKey()),
                      null)
                  .statusCode())
          .isEqualTo(404);
      assertThat(
              plane
                  .admin("GET", "/api/v1/sandboxes/" + sandbox.id() + "/stats?x=1", null)
                  .statusCode())
          .as("an unknown query parameter")
          .isEqualTo(422);
    }

    @Test
    void theCliShowsTopAndTheKeptLogOfASandbox() throws Exception {
      SandboxInfo sandbox = running(plane);
      String[] conn = {"--url", plane.url(), "--api-key", ControlPlane.ADMIN_KEY};

      String top =
          stdout(
              () ->
                  Main.run(concat(new String[] {"sandbox", "top", "--no-stream", "--json"}, conn)));
      String table =
          stdout(
              () ->
                  Main.run(
                      concat(new String[] {"sandbox", "top", "--no-stream", sandbox.id()}, conn)));
      client(plane).delete(sandbox.id());
      String log =
          stdout(() -> Main.run(concat(new String[] {"sandbox", "logs", sandbox.id()}, conn)));

      @SuppressWarnings("unchecked")
      var readings =
          (java.util.List<Map<String, Object>>) Json.parseAny(top.getBytes(StandardCharsets.UTF_8));
      assertThat(readings)
          .singleElement()
          .satisfies(
              r -> {
                assertThat(r)
                    .containsEntry("sandbox_id", sandbox.id())
                    .containsKeys("memory_bytes", "pids", "cpu_percent");
                assertThat(r).doesNotContainKey("network_rx_bytes");
              });
      assertThat(table.lines().toList()).hasSize(2);
      assertThat(table.lines().toList().get(0))
          .startsWith("ID")
          .contains("CPU %", "MEM", "PIDS", "NET RX");
      assertThat(table.lines().toList().get(1))
          .startsWith(sandbox.id())
          .contains("MiB")
          .endsWith("-");
      assertThat(log).contains("[paddock] created").contains("[paddock] deleted");
    }

    /** What {@code run} printed on standard output; it must exit 0. */
    private String stdout(java.util.concurrent.Callable<Integer> run) throws Exception {
      java.io.PrintStream original = System.out;
      java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
      System.setOut(new java.io.PrintStream(out, true, StandardCharsets.UTF_8));
      int exit;
      try {
        exit = run.call();
      } finally {
        System.setOut(original);
      }
      assertThat(exit).as(out.toString(StandardCharsets.UTF_8)).isZero();
      return out.toString(StandardCharsets.UTF_8);
    }

    private static String[] concat(String[]... parts) {
      return java.util.Arrays.stream(parts)
          .flatMap(java.util.Arrays::stream)
          .toArray(String[]::new);
    }

    @Test
    void metricsHaveNoPerSandboxSeriesUnlessTurnedOn() throws Exception {
      running(plane);

      String metrics = plane.send("GET", "/metrics", Optional.empty(), null).body();

      assertThat(metrics).contains("paddock_sandboxes{status=\"RUNNING\"} 1");
      assertThat(metrics).doesNotContain("sandbox_id=");
    }
  }

  @Nested
  class Series {
    @RegisterExtension final ControlPlane plane = new ControlPlane().withSandboxSeries();

    @Test
    void eachRunningSandboxHasSeriesUntilItStops() throws Exception {
      SandboxInfo first = running(plane);
      SandboxInfo second = running(plane);

      String metrics = plane.send("GET", "/metrics", Optional.empty(), null).body();

      for (SandboxInfo s : new SandboxInfo[] {first, second}) {
        assertThat(metrics)
            .containsPattern("paddock_sandbox_memory_bytes\\{sandbox_id=\"" + s.id() + "\"} \\d+")
            .containsPattern("paddock_sandbox_cpu_seconds_total\\{sandbox_id=\"" + s.id() + "\"} ")
            .contains("paddock_sandbox_pids{sandbox_id=\"" + s.id() + "\"}");
      }
      assertThat(metrics)
          .contains("paddock_sandbox_series_dropped 0")
          .doesNotContain("paddock_sandbox_network_receive_bytes_total{");

      client(plane).pause(first.id());
      String after = plane.send("GET", "/metrics", Optional.empty(), null).body();
      assertThat(after)
          .doesNotContain("sandbox_id=\"" + first.id() + "\"")
          .contains("paddock_sandbox_memory_bytes{sandbox_id=\"" + second.id() + "\"}");
    }
  }
}
