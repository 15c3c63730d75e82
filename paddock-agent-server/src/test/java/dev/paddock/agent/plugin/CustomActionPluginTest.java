package dev.paddock.agent.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.agent.AgentServer;
import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.user.RunAs;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * An integrator's plugin jar on {@code --plugin-path}: its action is served under {@code
 * /api/plugins/wordcount/}, needs the session key, keeps to the file roots, and runs its process as
 * the command user (nobody: the test runs as root, as CI does).
 */
class CustomActionPluginTest {
  @TempDir static Path dir;

  static final String SOURCE =
      """
      package example;

      import dev.paddock.agent.plugin.AgentPlugin;
      import dev.paddock.agent.plugin.PluginContext;
      import java.nio.charset.StandardCharsets;
      import java.util.List;
      import java.util.Map;

      public final class WordCountPlugin implements AgentPlugin {
        @Override
        public String name() {
          return "wordcount";
        }

        @Override
        public void start(PluginContext context) {
          context.route("GET", "count", call -> {
            var file = context.resolve(call.requiredQuery("path"));
            Process p = context.process(
                    List.of("sh", "-c", "id -u; wc -w < \\"$1\\"", "sh", file.toString()))
                .redirectErrorStream(true)
                .start();
            String[] out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                .trim().split("\\\\s+");
            int status = p.waitFor();
            call.sendJson(200, Map.of(
                "uid", out[0], "result", out[out.length - 1], "status", status));
          });
        }
      }
      """;

  static Path plugins;

  @BeforeAll
  static void buildPlugin() throws Exception {
    plugins = PluginJar.build(dir, "wordcount.jar", "example.WordCountPlugin", SOURCE);
    Files.createDirectories(dir.resolve("root"));
    // Nobody must be able to pass through the temporary directory to reach the files.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
  }

  @RegisterExtension
  final AgentFixture agent =
      new AgentFixture(
          b ->
              b.pluginPath(plugins)
                  .fileRoots(List.of(dir.resolve("root")))
                  .runAs(new RunAs(65534, 65534)));

  @Test
  void pluginActionRunsAsTheCommandUser() throws Exception {
    Path words = Files.writeString(dir.resolve("root/words.txt"), "one two three four\n");
    words.toFile().setReadable(true, false);

    HttpResponse<String> counted = agent.get("/api/plugins/wordcount/count?path=" + encode(words));

    assertThat(counted.statusCode()).as(counted.body()).isEqualTo(200);
    assertThat(AgentFixture.json(counted))
        .containsEntry("uid", "65534")
        .containsEntry("result", "4")
        .containsEntry("status", 0);
  }

  @Test
  void pluginProcessCannotReadWhatOnlyTheAgentMay() throws Exception {
    Path secret = Files.writeString(dir.resolve("root/secret.txt"), "agent only\n");
    Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));

    HttpResponse<String> counted = agent.get("/api/plugins/wordcount/count?path=" + encode(secret));

    assertThat(AgentFixture.json(counted))
        .containsEntry("uid", "65534")
        .isNotEqualTo(0)
        .doesNotContainEntry("status", 0);
  }

  @Test
  void pluginRoutesNeedTheSessionKey() throws Exception {
    HttpResponse<String> refused =
        agent.send(
            HttpRequest.newBuilder(agent.uri("/api/plugins/wordcount/count?path=/etc/passwd"))
                .GET()
                .build());
    assertThat(refused.statusCode()).isEqualTo(401);
  }

  @Test
  void pluginPathsCannotEscapeTheRoots() throws Exception {
    Files.createSymbolicLink(dir.resolve("root/link"), Path.of("/etc"));
    assertDetail(agent.get("/api/plugins/wordcount/count?path=/etc/passwd"), 403);
    assertDetail(
        agent.get("/api/plugins/wordcount/count?path=" + encode(dir.resolve("root/link/passwd"))),
        403);
    assertDetail(
        agent.get(
            "/api/plugins/wordcount/count?path=" + encode(dir.resolve("root/../../etc/passwd"))),
        403);
    assertDetail(agent.get("/api/plugins/wordcount/count?path=relative.txt"), 400);
    assertDetail(agent.get("/api/plugins/wordcount/count"), 422);
    assertThat(agent.get("/api/plugins/wordcount/other").statusCode()).isEqualTo(404);
  }

  @Test
  void aPluginThatFailsToStartStopsTheAgentWithItsReason() throws Exception {
    Path broken =
        PluginJar.build(
            dir.resolve("broken"),
            "broken.jar",
            "example.BrokenPlugin",
            """
            package example;

            public final class BrokenPlugin implements dev.paddock.agent.plugin.AgentPlugin {
              public String name() { return "Not A Name"; }
              public void start(dev.paddock.agent.plugin.PluginContext context) {}
            }
            """);
    AgentConfig config =
        AgentConfig.builder()
            .host("127.0.0.1")
            .port(0)
            .workspace(agent.workspace())
            .eventsDir(dir.resolve("broken-events"))
            .pluginPath(broken)
            .forkServer(false)
            .build();

    org.assertj.core.api.Assertions.assertThatThrownBy(() -> AgentServer.start(config).close())
        .isInstanceOf(PluginException.class)
        .hasMessageContaining("Not A Name");
  }

  private static void assertDetail(HttpResponse<String> response, int status) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    assertThat(response.body()).contains("\"detail\"");
  }

  private static String encode(Path path) {
    return URLEncoder.encode(path.toString(), StandardCharsets.UTF_8);
  }
}
