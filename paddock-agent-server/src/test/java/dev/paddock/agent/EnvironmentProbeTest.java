package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

class EnvironmentProbeTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private HttpResponse<String> probe(String header, String key) throws Exception {
    return agent.send(
        HttpRequest.newBuilder(agent.uri(AgentServer.ENVIRONMENT_ROUTE))
            .header(header, key)
            .GET()
            .build());
  }

  @Test
  @SuppressWarnings("unchecked")
  void theAdminKeyReadsTheOsAndTheToolsOnThePath() throws Exception {
    HttpResponse<String> response = probe(AgentServer.ADMIN_KEY_HEADER, AgentFixture.ADMIN_KEY);

    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    Map<String, Object> body = AgentFixture.json(response);
    Map<String, String> runtimes = (Map<String, String>) body.get("runtimes");
    // This JVM's own java and the git every test machine has are on the PATH.
    assertThat(runtimes.get("git")).matches("\\d+\\.\\d+.*");
    assertThat(runtimes).containsKey("java");
    assertThat(body.get("os"))
        .isEqualTo(EnvironmentProbe.osName(Path.of("/etc/os-release")).orElse(null));
  }

  @Test
  void theSessionKeyReadsItTooAndNoKeyDoesNot() throws Exception {
    assertThat(probe(AgentServer.SESSION_KEY_HEADER, AgentFixture.KEY).statusCode()).isEqualTo(200);
    assertThat(probe(AgentServer.ADMIN_KEY_HEADER, "wrong").statusCode()).isEqualTo(401);
  }

  @Test
  void versionsAreCutFromTheFirstLine(@TempDir Path dir) throws Exception {
    assertThat(
            EnvironmentProbe.parse(
                "python3\tPython 3.11.2\n"
                    + "java\topenjdk version \"25.0.3\" 2026-10-20 LTS\n"
                    + "go\tgo version go1.22.1 linux/amd64\n"
                    + "odd\tno version here\n"))
        .containsEntry("python3", "3.11.2")
        .containsEntry("java", "25.0.3")
        .containsEntry("go", "1.22.1")
        .containsEntry("odd", "no version here");
    Path release =
        Files.writeString(dir.resolve("os-release"), "ID=x\nPRETTY_NAME=\"Debian 12\"\n");
    assertThat(EnvironmentProbe.osName(release)).contains("Debian 12");
    assertThat(EnvironmentProbe.osName(dir.resolve("none"))).isEmpty();
  }
}
