package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.core.KeyRing;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** How an agent starts: where it listens, its workspace, what commands learn about it. */
class AgentStartTest {
  @RegisterExtension
  final AgentFixture agent = new AgentFixture(b -> b.sandboxId("sbx-start-test"));

  @RegisterExtension final AgentFixture noSandbox = new AgentFixture();

  @TempDir Path temp;

  @Test
  void anAgentWithKeysButNoHostBindsLoopbackOnly() {
    AgentConfig config =
        AgentConfig.builder()
            .sessionKeys(KeyRing.ofKeys(List.of("k")))
            .adminKeys(KeyRing.ofKeys(List.of("a")))
            .build();
    assertThat(config.host()).isEqualTo("127.0.0.1");
    assertThat(AgentConfig.builder().build().host()).isEqualTo("127.0.0.1");
    assertThat(AgentConfig.builder().host("0.0.0.0").build().host()).isEqualTo("0.0.0.0");
  }

  @Test
  void aMissingWorkspaceIsCreatedWithItsParents() throws Exception {
    Path workspace = temp.resolve("not/yet/here");
    AgentServer server =
        AgentServer.start(
            AgentConfig.builder()
                .port(0)
                .workspace(workspace)
                .eventsDir(temp.resolve("events"))
                .sessionKeys(KeyRing.ofKeys(List.of(AgentFixture.KEY)))
                .build());
    try {
      assertThat(workspace).isDirectory();
      HttpResponse<String> pwd =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(
                          URI.create(
                              "http://127.0.0.1:"
                                  + server.port()
                                  + "/api/bash/execute_bash_command"))
                      .header(AgentServer.SESSION_KEY_HEADER, AgentFixture.KEY)
                      .timeout(Duration.ofSeconds(30))
                      .POST(HttpRequest.BodyPublishers.ofString("{\"command\":\"pwd -P\"}"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(AgentFixture.json(pwd)).containsEntry("stdout", workspace.toRealPath() + "\n");
    } finally {
      server.close();
    }
  }

  @Test
  void commandsKnowTheirSandboxAndReachTheirAgentWithoutAKey() throws Exception {
    Map<String, Object> result =
        new BashClient(agent)
            .execute(
                "command",
                "echo \"$SANDBOX_ID\"; echo \"$PADDOCK_AGENT_URL\";"
                    + " hostport=${PADDOCK_AGENT_URL#http://};"
                    + " exec 3<>/dev/tcp/${hostport%:*}/${hostport##*:};"
                    + " printf 'GET /api/sessions HTTP/1.0\\r\\n\\r\\n' >&3; head -1 <&3");
    String[] lines = ((String) result.get("stdout")).split("\r?\n");
    assertThat(lines[0]).isEqualTo("sbx-start-test");
    assertThat(lines[1]).isEqualTo("http://127.0.0.1:" + agent.server().port());
    // It finds its agent, and the agent still wants the key it was never given.
    assertThat(lines[2]).startsWith("HTTP/1.1 401");
  }

  @Test
  void outsideASandboxCommandsGetNoSandboxId() throws Exception {
    Map<String, Object> result =
        new BashClient(noSandbox).execute("command", "echo \"${SANDBOX_ID-unset}\"");
    assertThat(result).containsEntry("stdout", "unset\n");
    assertThat(Files.exists(noSandbox.workspace())).isTrue();
  }
}
