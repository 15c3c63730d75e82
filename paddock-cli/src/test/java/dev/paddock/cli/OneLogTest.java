package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.cli.logging.PaddockLogging;
import dev.paddock.client.PaddockClient;
import dev.paddock.http.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * The control plane's one log: JSON lines from SLF4J and System.Logger alike, one line per
 * lifecycle change with its fields, and no key or secret in it, even at DEBUG.
 */
class OneLogTest {
  @RegisterExtension final ControlPlane plane = new ControlPlane();

  private final PrintStream realErr = System.err;

  @AfterEach
  void restoreTheLog() {
    System.setErr(realErr);
    PaddockLogging.configure(Map.of("PADDOCK_LOG_FORMAT", "text", "PADDOCK_LOG_LEVEL", "info"));
  }

  @Test
  void everythingLogsOneJsonLineWithTheLifecycleAndNoSecret() throws Exception {
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    PaddockLogging.configure(Map.of("PADDOCK_LOG_FORMAT", "json", "PADDOCK_LOG_LEVEL", "debug"));
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));

    PaddockClient admin = PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY);
    PaddockClient.NewUser alice = admin.createUser("alice", false);
    PaddockClient.NewUser bob = admin.createUser("bob", false);
    PaddockClient asAlice = PaddockClient.connect(URI.create(plane.url()), alice.apiKey());
    SandboxInfo sandbox = asAlice.create(Optional.empty(), true, Duration.ofSeconds(60));
    String firstKey = sandbox.sessionApiKey().orElseThrow();
    asAlice.agent(sandbox).exec("echo hi", 10, s -> {}, s -> {});
    plane.asSandbox("POST", "/api/v1/webhooks/events/conv-1", firstKey, "[{\"a\":1}]");
    plane.send("GET", "/api/v1/sandboxes/" + sandbox.id() + "?x=" + firstKey, key(bob), null);
    asAlice.pause(sandbox.id());
    String secondKey = asAlice.resume(sandbox.id()).sessionApiKey().orElseThrow();
    plane.send("DELETE", "/api/v1/sandboxes/" + sandbox.id(), key(bob), null);
    asAlice.delete(sandbox.id());
    System.getLogger("paddock.backend.docker")
        .log(System.Logger.Level.WARNING, "a backend line about {0}", "something");
    LoggerFactory.getLogger("paddock.test").info("last line");

    String log = captured.toString(StandardCharsets.UTF_8);
    List<Map<String, Object>> lines =
        log.lines().map(l -> Json.parseObject(l.getBytes(StandardCharsets.UTF_8))).toList();
    assertThat(lines)
        .allSatisfy(line -> assertThat(line).containsKeys("ts", "level", "logger", "msg"));
    assertThat(lines)
        .as("System.Logger lines come out in the same format")
        .anySatisfy(
            line ->
                assertThat(line)
                    .containsEntry("logger", "paddock.backend.docker")
                    .containsEntry("level", "WARN")
                    .containsEntry("msg", "a backend line about something"));
    List<String> lifecycle =
        lines.stream()
            .filter(line -> "paddock.lifecycle".equals(line.get("logger")))
            .peek(
                line ->
                    assertThat(line)
                        .containsEntry("sandbox_id", sandbox.id())
                        .containsKeys("op", "user_id", "spec_id", "outcome"))
            .map(line -> line.get("op") + ":" + line.get("outcome") + ":" + line.get("user_id"))
            .toList();
    String a = alice.user().id();
    assertThat(lifecycle)
        .containsExactly(
            "start:starting:" + a,
            "start:running:" + a,
            "pause:ok:" + a,
            "resume:ok:" + a,
            "delete:not_found:" + bob.user().id(),
            "delete:ok:" + a);
    assertThat(lines)
        .filteredOn(line -> "paddock.lifecycle".equals(line.get("logger")))
        .allSatisfy(line -> assertThat(line.get("duration_ms")).isInstanceOf(Number.class));

    for (String secret :
        List.of(
            firstKey,
            secondKey,
            ControlPlane.ADMIN_KEY,
            alice.apiKey(),
            bob.apiKey(),
            ControlPlane.MASTER_SECRET)) {
      assertThat(log.lines().filter(line -> line.contains(secret)))
          .as("lines with a key or secret")
          .isEmpty();
    }
  }

  private static Optional<String> key(PaddockClient.NewUser user) {
    return Optional.of(user.apiKey());
  }
}
