package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.client.AgentClient;
import dev.paddock.client.PaddockClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway in front of the Docker backend in host mode, as {@code paddock server} runs it: the
 * agent in a container is reached through the control plane's address only (exposed URLs), for
 * exec, upload and download, and so is a web server a command of the sandbox listens on.
 */
class GatewayDockerTest {
  @RegisterExtension final ServerProcess paddock = new ServerProcess();

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void aHostModeContainerIsReachedThroughTheGatewayForExecUploadAndDownload(@TempDir Path dir)
      throws Exception {
    TestDocker.require();
    String url = paddock.start(TestDocker.serverSettings());
    PaddockClient client = PaddockClient.connect(URI.create(url), ServerProcess.ADMIN_KEY);
    SandboxInfo running = client.create(Optional.empty(), true, Duration.ofSeconds(300));
    try {
      assertThat(running.agentServerUrl()).contains(url + "/sandboxes/" + running.id() + "/agent");
      AgentClient agent = client.agent(running);
      StringBuilder out = new StringBuilder();
      assertThat(agent.exec("echo via-$((1+1)); cat /etc/debian_version", 60, out::append, e -> {}))
          .isZero();
      assertThat(out.toString()).startsWith("via-2\n").contains("12."); // bookworm, not the host
      Path local = dir.resolve("up.bin");
      byte[] data = new byte[1 << 20];
      new java.util.Random(12).nextBytes(data);
      Files.write(local, data);
      String remote = running.settings().workingDir().orElse("/workspace") + "/gw.bin";
      agent.upload(local, remote);
      Path back = dir.resolve("back.bin");
      agent.download(remote, back);
      assertThat(Files.readAllBytes(back)).isEqualTo(data);
      HttpResponse<String> alive = get(running.agentServerUrl().orElseThrow() + "/alive");
      assertThat(alive.statusCode()).isEqualTo(200);

      // A web server a command starts in the container (as the run-as user, while the agent is
      // root without CAP_SYS_PTRACE) is reached through the gateway with the key or a signed URL.
      int port = startWebServer(agent, "from-container-" + running.id());
      String portUrl = url + "/sandboxes/" + running.id() + "/port/" + port + "/";
      String key = running.sessionApiKey().orElseThrow();
      HttpResponse<String> withKey = get(portUrl, Map.of("X-Session-API-Key", key));
      assertThat(withKey.statusCode()).as(withKey.body()).isEqualTo(200);
      assertThat(withKey.body()).isEqualTo("from-container-" + running.id());
      assertThat(get(portUrl, Map.of()).statusCode()).isEqualTo(401);
      HttpResponse<String> signed =
          http.send(
              HttpRequest.newBuilder(
                      URI.create(
                          url + "/api/v1/sandboxes/" + running.id() + "/ports/" + port + "/url"))
                  .header("Authorization", "Bearer " + ServerProcess.ADMIN_KEY)
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString("{\"expires_in\": 600}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(signed.statusCode()).as(signed.body()).isEqualTo(200);
      String signedUrl =
          (String) dev.paddock.http.Json.parseObject(signed.body().getBytes()).get("url");
      HttpResponse<String> page = get(signedUrl, Map.of());
      assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
      assertThat(page.body()).isEqualTo("from-container-" + running.id());
    } finally {
      client.delete(running.id());
    }
    Awaitility.await("the container is gone")
        .atMost(Duration.ofSeconds(60))
        .until(() -> TestDocker.containers(running.id()).isBlank());
  }

  private HttpResponse<String> get(String url) throws Exception {
    return get(url, Map.of());
  }

  private HttpResponse<String> get(String url, Map<String, String> headers) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30));
    headers.forEach(request::header);
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /**
   * Starts a one-line HTTP server in the container (perl: the minimal image has no other language)
   * as a running command of the agent, on a free loopback port; answers that port.
   */
  private static int startWebServer(AgentClient agent, String text) throws Exception {
    String server =
        "perl -MIO::Socket::INET -e '"
            + "$s = IO::Socket::INET->new(LocalAddr => \"127.0.0.1\", LocalPort => 0,"
            + " Listen => 5) or die \"listen: $!\";"
            + " open(F, \">port.part\") or die; print F $s->sockport; close F;"
            + " rename(\"port.part\", \"port\");"
            + " while ($c = $s->accept) { while (<$c>) { last if /^\\r?$/ }"
            + " print $c \"HTTP/1.1 200 OK\\r\\nContent-Length: \" . length($ARGV[0])"
            + " . \"\\r\\nConnection: close\\r\\n\\r\\n$ARGV[0]\"; close $c }'"
            + " '"
            + text
            + "'";
    java.util.concurrent.CompletableFuture.runAsync(
        () -> agent.exec("rm -f port; exec " + server, 600, out -> {}, err -> {}));
    StringBuilder port = new StringBuilder();
    Awaitility.await("the web server's port file")
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              port.setLength(0);
              return agent.exec("cat port", 10, port::append, e -> {}) == 0
                  && !port.toString().isBlank();
            });
    return Integer.parseInt(port.toString().strip());
  }
}
