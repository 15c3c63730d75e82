package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.client.PaddockClient;
import dev.paddock.server.ApiServerConfig;
import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code /metrics}: route templates only, bounded series, escaped labels, an optional key. */
class MetricsApiTest {
  private static final String METRICS_KEY = "metrics-key-for-the-test";

  /** One sample line of the text exposition format (labels escaped as the format requires). */
  private static final Pattern SAMPLE =
      Pattern.compile(
          "([a-zA-Z_:][a-zA-Z0-9_:]*)"
              + "(\\{([a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|\\\\[\\\\\"n])*\""
              + "(,[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|\\\\[\\\\\"n])*\")*)?\\})?"
              + " (-?[0-9.eE+-]+|\\+Inf|NaN)");

  @RegisterExtension
  final ControlPlane plane =
      new ControlPlane()
          .withApi(
              new ApiServerConfig(
                  ApiServerConfig.DEFAULT.webhookMaxRequestBytes(),
                  ApiServerConfig.DEFAULT.webhookQuota(),
                  Optional.of(METRICS_KEY)));

  private String scrape() throws Exception {
    HttpResponse<String> response = plane.send("GET", "/metrics", Optional.of(METRICS_KEY), null);
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }

  /** Parses the exposition: every line a comment or a valid sample; returns the series. */
  private static Set<String> series(String exposition) {
    Set<String> series = new TreeSet<>();
    Set<String> families = new TreeSet<>();
    for (String line : exposition.split("\n", -1)) {
      if (line.isEmpty()) {
        continue;
      }
      if (line.startsWith("# TYPE ")) {
        families.add(line.split(" ")[2]);
        continue;
      }
      if (line.startsWith("# HELP ")) {
        continue;
      }
      Matcher m = SAMPLE.matcher(line);
      assertThat(m.matches()).as("a valid sample line: %s", line).isTrue();
      assertThat(families)
          .as("the family of %s was declared", line)
          .anyMatch(f -> m.group(1).equals(f) || m.group(1).startsWith(f + "_"));
      series.add(line.substring(0, line.lastIndexOf(' ')));
    }
    return series;
  }

  @Test
  void metricsNeedTheKeyWhenOneIsSet() throws Exception {
    assertThat(plane.send("GET", "/metrics", Optional.empty(), null).statusCode()).isEqualTo(401);
    assertThat(plane.send("GET", "/metrics", Optional.of("wrong"), null).statusCode())
        .isEqualTo(401);
    assertThat(plane.admin("GET", "/metrics", null).statusCode())
        .as("an admin API key is not the metrics key")
        .isEqualTo(401);
    assertThat(scrape()).contains("# TYPE paddock_http_requests_total counter");
  }

  @Test
  void routesAreCountedByTemplateNeverByIdOrPath() throws Exception {
    SandboxInfo sandbox =
        PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY)
            .create(Optional.empty(), false, Duration.ofSeconds(60));
    plane.admin("GET", "/api/v1/sandboxes/" + sandbox.id(), null);
    plane.admin("GET", "/api/v1/archives/" + sandbox.id() + "/some-archive/file.tar.gz", null);
    plane.send("GET", "/api/v1/session/pdk_a-secret-in-a-path", Optional.empty(), null);

    String metrics = scrape();
    assertThat(metrics)
        .contains("route=\"/api/v1/sandboxes/{id}\",code=\"200\"} 1")
        .contains("route=\"/api/v1/archives/{id}/{group}/{file}\",code=\"404\"} 1")
        .contains("route=\"unmatched\",code=\"404\"} 1")
        .doesNotContain(sandbox.id())
        .doesNotContain("some-archive")
        .doesNotContain("a-secret-in-a-path");
    series(metrics);
  }

  @Test
  void unknownPathsAddAtMostAConstantNumberOfSeries() throws Exception {
    int before = series(scrape()).size();
    Random random = new Random(42);
    for (int i = 0; i < 1000; i++) {
      String path = "/p" + Long.toHexString(random.nextLong()) + "/" + random.nextInt();
      plane.send(i % 2 == 0 ? "GET" : "POST", path, Optional.empty(), null);
    }
    Set<String> after = series(scrape());

    // GET and POST on "unmatched" with 404, plus /metrics itself: a handful, never one per path.
    assertThat(after.size() - before).isLessThanOrEqualTo(4);
  }

  @Test
  void aPathCannotInjectLinesIntoTheExposition() throws Exception {
    List<String> attacks =
        List.of(
            "/x%22%7D%201%0Afake_metric%7Ba%3D%22b",
            "/api/v1/sandboxes/%22%7D%201%0Afake_metric%7Ba%3D%22b",
            "/api/v1/archives/a%5C%22/b%0A/c");
    for (String attack : attacks) {
      plane.send("GET", attack, Optional.of(ControlPlane.ADMIN_KEY), null);
    }
    String metrics = scrape();

    assertThat(metrics).doesNotContain("fake_metric");
    assertThat(series(metrics))
        .extracting(s -> s.replaceAll("\\{.*", ""))
        .allMatch(name -> name.startsWith("paddock_"));
  }
}
