package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.client.PaddockClient;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 15's key exposure scan on the process backend: a user's API key, a sandbox's session key,
 * the admin key and the master secret appear nowhere a command in a sandbox can read through its
 * environment or the {@code environ}/{@code cmdline} of any process above it (agent, control
 * plane), nowhere under the data directory, not in {@code /metrics} and not in error answers. (The
 * process backend isolates nothing else by design — a command can read the control plane's memory —
 * see SECURITY.md.)
 */
class KeyExposureTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  @RegisterExtension final ControlPlane plane = new ControlPlane();

  @Test
  void noKeyIsReadableFromASandboxTheDataDirMetricsOrErrors() throws Exception {
    PaddockClient admin = PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY);
    String apiKey = admin.createUser("carol", false).apiKey();
    PaddockClient carol = PaddockClient.connect(URI.create(plane.url()), apiKey);
    SandboxInfo sandbox = carol.create(Optional.empty(), true, TIMEOUT);
    String sessionKey = carol.get(sandbox.id()).orElseThrow().sessionApiKey().orElseThrow();
    Map<String, String> secrets =
        Map.of(
            "API key",
            apiKey,
            "session key",
            sessionKey,
            "admin key",
            ControlPlane.ADMIN_KEY,
            "master secret",
            ControlPlane.MASTER_SECRET);

    StringBuilder seen = new StringBuilder();
    int exit =
        carol
            .agent(sandbox)
            .exec(
                // The command, the agent and the control plane that started it: up the tree.
                "env; p=$$; while [ \"$p\" -gt 1 ]; do tr '\\0' '\\n' < /proc/$p/environ;"
                    + " tr '\\0' ' ' < /proc/$p/cmdline; echo;"
                    + " p=$(awk '/^PPid:/{print $2}' /proc/$p/status); done 2>/dev/null; true",
                30,
                seen::append,
                seen::append);
    assertThat(exit).isZero();
    // The scan read real process data: the agent's own command line is among it.
    assertThat(seen).contains("dev.paddock.agent");
    assertNoneOf(secrets, "a command's view of env, environ and cmdline", seen.toString());

    assertNoneOf(secrets, "GET /metrics", plane.admin("GET", "/metrics", null).body());
    String wrongKind = plane.send("GET", "/api/v1/sandboxes", Optional.of(sessionKey), null).body();
    assertNoneOf(secrets, "an error answering a session key used as an API key", wrongKind);

    for (Path file : files(plane.dataDir())) {
      String text = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
      assertNoneOf(secrets, file.toString(), text);
    }
    carol.delete(sandbox.id());
  }

  private static void assertNoneOf(Map<String, String> secrets, String where, String text) {
    secrets.forEach(
        (name, value) -> assertThat(text).as(name + " in " + where).doesNotContain(value));
  }

  private static List<Path> files(Path root) throws IOException {
    List<Path> found = new ArrayList<>();
    try (Stream<Path> paths = Files.walk(root)) {
      paths.filter(Files::isRegularFile).forEach(found::add);
    }
    assertThat(found).as("the data dir holds the store at least").isNotEmpty();
    return found;
  }
}
