package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.KeyDigest;
import dev.paddock.backend.kit.protocol.AgentSecrets;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --secrets-file}: keys from a file a backend mounted, read once, never left behind. */
class SecretsFileTest {
  private static final String KEY = "file-session-key";

  @TempDir Path temp;

  private final List<Process> started = new ArrayList<>();

  @AfterEach
  void stopAgents() throws InterruptedException {
    for (Process process : started) {
      process.destroy();
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    }
  }

  @Test
  void keysComeFromTheFileWhichIsDeletedOnceRead() throws Exception {
    Path secrets = temp.resolve("secrets");
    Files.writeString(secrets, AgentSecrets.lines(List.of(KeyDigest.sha256Hex(KEY)), ""));

    Process agent = start("--secrets-file", secrets.toString());
    int port = AgentProcess.readyPort(agent);

    assertThat(status(port, Optional.of(KEY))).isEqualTo(200);
    assertThat(status(port, Optional.of("another key"))).isEqualTo(401);
    assertThat(secrets).doesNotExist();
    assertThat(Files.readString(Path.of("/proc/" + agent.pid() + "/environ")))
        .doesNotContain(KeyDigest.sha256Hex(KEY));
  }

  @Test
  void anEmptySecretsFileRefusesToServe() throws Exception {
    Path secrets = Files.writeString(temp.resolve("secrets"), "\n");

    Process agent = start("--secrets-file", secrets.toString());

    assertThat(agent.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(agent.exitValue()).isEqualTo(2);
    assertThat(output(agent)).contains("secrets were to be given but none arrived");
  }

  @Test
  void aMalformedDigestIsRefusedWithoutEchoingIt() throws Exception {
    Path secrets = Files.writeString(temp.resolve("secrets"), "session_api_key_sha256=nothex\n");

    Process agent = start("--secrets-file", secrets.toString());

    assertThat(agent.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(agent.exitValue()).isEqualTo(2);
    assertThat(output(agent))
        .contains("session_api_key_sha256 must be 64 hex digits")
        .doesNotContain("nothex");
  }

  @Test
  void aMissingSecretsFileRefusesToServe() throws Exception {
    Process agent = start("--secrets-file", temp.resolve("absent").toString());

    assertThat(agent.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(agent.exitValue()).isEqualTo(2);
    assertThat(output(agent)).contains("does not exist");
  }

  @Test
  void stdinAndFileTogetherAreRefused() throws Exception {
    Path secrets = Files.writeString(temp.resolve("secrets"), "session_api_key=k\n");

    Process agent = start("--secrets-stdin", "--secrets-file", secrets.toString());

    assertThat(agent.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(agent.exitValue()).isEqualTo(2);
    assertThat(output(agent)).contains("not both");
    assertThat(secrets).exists(); // refused before anything was read
  }

  private Process start(String... secretsOptions) throws IOException {
    List<String> argv =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-Xshare:auto",
                "-cp",
                System.getProperty("java.class.path"),
                AgentServerMain.class.getName(),
                "--port",
                "0",
                "--no-fork-server",
                "--workspace",
                temp.resolve("workspace").toString(),
                "--events-dir",
                temp.resolve("events").toString()));
    argv.addAll(List.of(secretsOptions));
    Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
    started.add(process);
    process.getOutputStream().close();
    return process;
  }

  private static String output(Process agent) throws IOException {
    return new String(agent.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
  }

  private static int status(int port, Optional<String> key) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/sessions"))
            .timeout(Duration.ofSeconds(10));
    key.ifPresent(k -> request.header(AgentServer.SESSION_KEY_HEADER, k));
    try (HttpClient http = HttpClient.newHttpClient()) {
      return http.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }
  }
}
