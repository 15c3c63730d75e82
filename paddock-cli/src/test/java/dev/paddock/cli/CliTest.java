package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.http.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The {@code paddock} command line as a user runs it: its own process, finding the server (its own
 * process too) through the data dir, real sandboxes of the process backend (issue 9, point 8).
 */
class CliTest {
  @RegisterExtension final ServerProcess paddock = new ServerProcess();

  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(String json) {
    return (Map<String, Object>) Json.parseAny(json.getBytes(StandardCharsets.UTF_8));
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(String json) {
    return (List<Map<String, Object>>) Json.parseAny(json.getBytes(StandardCharsets.UTF_8));
  }

  private ServerProcess.Run ok(String... args) throws Exception {
    ServerProcess.Run run = paddock.cli(args);
    assertThat(run.exit()).as("paddock %s: %s", String.join(" ", args), run.err()).isZero();
    return run;
  }

  private String create(String... flags) throws Exception {
    String[] args = new String[flags.length + 3];
    args[0] = "sandbox";
    args[1] = "create";
    args[2] = "--json";
    System.arraycopy(flags, 0, args, 3, flags.length);
    return (String) object(ok(args).out()).get("id");
  }

  private String sh(String id, String command) throws Exception {
    return ok("exec", id, "--", command).out();
  }

  @Test
  void createWithFlagsGivesTheSandboxItsEnvLabelsResourcesAndLifetime() throws Exception {
    paddock.start();
    Instant before = Instant.now();
    ServerProcess.Run created =
        ok(
            "sandbox",
            "create",
            "--json",
            "--env",
            "GREETING=hello world",
            "--label",
            "team=ml",
            "--label",
            "run=42",
            "--cpus",
            "1",
            "--memory",
            "512m",
            "--pids",
            "256",
            "--timeout",
            "10m",
            "--idle-timeout",
            "5m",
            "--on-idle",
            "delete");

    Map<String, Object> shown = object(created.out());
    assertThat(shown.get("status")).isEqualTo("RUNNING");
    assertThat(shown.get("labels")).isEqualTo(Map.of("team", "ml", "run", "42"));
    assertThat(shown.get("resources"))
        .isEqualTo(Map.of("cpus", 1.0, "memory", 536870912, "pids", 256));
    assertThat(shown.get("idle_timeout")).isEqualTo(300);
    assertThat(shown.get("on_idle")).isEqualTo("delete");
    assertThat(Instant.parse((String) shown.get("timeout_at")))
        .isBetween(before.plus(Duration.ofMinutes(10)), Instant.now().plus(Duration.ofMinutes(10)));
    String id = (String) shown.get("id");
    assertThat(sh(id, "echo \"$GREETING\"")).isEqualTo("hello world\n");

    ServerProcess.Run readable = ok("sandbox", "get", id);
    assertThat(readable.out())
        .contains("labels:      run=42 team=ml")
        .contains("resources:   cpus=1 memory=512m pids=256")
        .contains("idle after:  300s (then delete)");
  }

  @Test
  void badFlagValuesAreRefusedBeforeAnythingIsCreated() throws Exception {
    paddock.start();

    ServerProcess.Run memory = paddock.cli("sandbox", "create", "--memory", "lots");
    ServerProcess.Run action = paddock.cli("sandbox", "create", "--on-idle", "explode");

    assertThat(memory.exit()).isEqualTo(2);
    assertThat(memory.err()).contains("--memory 'lots': expected");
    assertThat(action.exit()).isEqualTo(2);
    assertThat(action.err()).contains("--on-idle must be 'pause' or 'delete', got 'explode'");
    assertThat(list(ok("sandbox", "list", "--json").out())).isEmpty();
  }

  @Test
  void listFiltersByStatusAndLabels() throws Exception {
    paddock.start();
    String ml = create("--label", "team=ml", "--label", "run=1");
    String web = create("--label", "team=web");
    ok("sandbox", "pause", web);

    assertThat(ids(ok("sandbox", "list", "--json", "--label", "team=ml").out()))
        .containsExactly(ml);
    assertThat(ids(ok("sandbox", "list", "--json", "--label", "team=ml", "--label", "run=2").out()))
        .isEmpty();
    assertThat(ids(ok("sandbox", "list", "--json", "--status", "PAUSED").out()))
        .containsExactly(web);
    assertThat(ids(ok("sandbox", "list", "--json", "--status", "RUNNING,PAUSED").out()))
        .containsExactlyInAnyOrder(ml, web);
    assertThat(ok("sandbox", "list", "--label", "team=web").out())
        .contains(web)
        .contains("team=web")
        .doesNotContain(ml);
  }

  private static List<Object> ids(String json) {
    return list(json).stream().map(m -> m.get("id")).toList();
  }

  @Test
  void specListShowsTheServersSpecs() throws Exception {
    paddock.start();

    List<Map<String, Object>> specs = list(ok("spec", "list", "--json").out());
    ServerProcess.Run table = ok("spec", "list");

    assertThat(specs).isNotEmpty();
    assertThat(specs.get(0)).containsKeys("id", "working_dir", "resources");
    assertThat(table.out()).startsWith("ID").contains((String) specs.get(0).get("id"));
  }

  @Test
  void aSpecsDefaultsApplyWhenTheCreateGivesNoneWithinTheOperatorsMaxima() throws Exception {
    paddock.start(
        Map.of(
            "process.spec.timeout", "20m",
            "process.spec.idle-timeout", "3m",
            "process.memory", "4g",
            "process.pids-limit", "512",
            "PADDOCK_MAX_MEMORY", "1g",
            "PADDOCK_MAX_TIMEOUT", "15m"));

    Map<String, Object> spec = list(ok("spec", "list", "--json").out()).get(0);
    Instant before = Instant.now();
    Map<String, Object> defaults = object(ok("sandbox", "create", "--json").out());
    Map<String, Object> given =
        object(
            ok(
                    "sandbox",
                    "create",
                    "--json",
                    "--timeout",
                    "5m",
                    "--idle-timeout",
                    "1m",
                    "--pids",
                    "256")
                .out());

    assertThat(spec)
        .containsEntry("timeout", 1200)
        .containsEntry("idle_timeout", 180)
        .containsEntry("resources", Map.of("memory", 4294967296L, "pids", 512));
    assertThat(ok("spec", "list").out()).contains("1200s").contains("180s").contains("memory=4g");
    assertThat(defaults.get("idle_timeout")).isEqualTo(180);
    assertThat(defaults.get("resources"))
        .as("the spec's memory brought down to PADDOCK_MAX_MEMORY")
        .isEqualTo(Map.of("memory", 1073741824, "pids", 512));
    assertThat(Instant.parse((String) defaults.get("timeout_at")))
        .as("the spec's 20 minutes brought down to PADDOCK_MAX_TIMEOUT")
        .isBetween(before.plus(Duration.ofMinutes(15)), Instant.now().plus(Duration.ofMinutes(15)));
    assertThat(given.get("idle_timeout")).isEqualTo(60);
    assertThat(given.get("resources")).isEqualTo(Map.of("memory", 1073741824, "pids", 256));
    assertThat(Instant.parse((String) given.get("timeout_at")))
        .isBefore(Instant.now().plus(Duration.ofMinutes(5)));
  }

  @Test
  void aRunningCommandKeepsAnIdleSandboxAliveAndTheIdleActionFiresAfterItEnds() throws Exception {
    paddock.start();
    Map<String, Object> sandbox =
        object(
            ok("sandbox", "create", "--json", "--idle-timeout", "3s", "--on-idle", "delete").out());
    String id = (String) sandbox.get("id");
    // Started and left alone: no request, stream or socket is open while it runs.
    HttpResponse<String> started =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create(agentUrl(sandbox) + "/api/bash/start_bash_command"))
                    .header("X-Session-API-Key", (String) sandbox.get("session_api_key"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"command\": \"sleep 12\"}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(started.statusCode()).as(started.body()).isEqualTo(200);

    Awaitility.await("alive while its command runs, three times its idle timeout")
        .during(Duration.ofSeconds(7))
        // Each poll is a CLI process (1-2 s on a loaded machine): room for the last one.
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> ids(ok("sandbox", "list", "--json").out()).contains(id));
    Awaitility.await("deleted for idleness once the command ended")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> !ids(ok("sandbox", "list", "--json").out()).contains(id));
  }

  @SuppressWarnings("unchecked")
  private static String agentUrl(Map<String, Object> sandbox) {
    for (Map<String, Object> url : (List<Map<String, Object>>) sandbox.get("exposed_urls")) {
      if ("AGENT_SERVER".equals(url.get("name"))) {
        String u = (String) url.get("url");
        return u.endsWith("/") ? u.substring(0, u.length() - 1) : u;
      }
    }
    throw new AssertionError("no agent URL in " + sandbox);
  }

  @Test
  void execDashIForwardsStandardInputToItsEnd() throws Exception {
    paddock.start();
    String id = create();

    ServerProcess.Run upper =
        paddock.cli(
            Map.of(), "hello\nsecond line\n", "exec", "-i", id, "--", "tr a-z A-Z; echo done");
    ServerProcess.Run without =
        paddock.cli(Map.of(), "ignored\n", "exec", id, "--", "cat; echo end");

    assertThat(upper.exit()).as(upper.err()).isZero();
    assertThat(upper.out()).isEqualTo("HELLO\nSECOND LINE\ndone\n");
    assertThat(without.out()).as("without -i the command reads nothing").isEqualTo("end\n");
  }

  @Test
  void cpCopiesDirectoriesBothWaysKeepingModesAndLinks() throws Exception {
    paddock.start();
    String id = create();
    Path local = paddock.dataDir().resolve("local");
    Path project = Files.createDirectories(local.resolve("project/src"));
    Files.writeString(project.resolve("run.sh"), "#!/bin/sh\necho run\n");
    Files.setPosixFilePermissions(
        project.resolve("run.sh"), PosixFilePermissions.fromString("rwxr-x---"));
    Files.writeString(local.resolve("project/README"), "read me\n");
    Files.createDirectories(local.resolve("project/empty"));
    Files.createSymbolicLink(local.resolve("project/link"), Path.of("src/run.sh"));
    // The process backend's sandboxes share the host's /tmp: the directory is the host's, and
    // removed from here whatever the test's outcome.
    String remote = "/tmp/cp-" + id;
    try {
      ok("exec", id, "--", "mkdir -p " + remote);

      ok("cp", local.resolve("project").toString(), id + ":" + remote + "/");
      ok("cp", local.resolve("project").toString(), id + ":" + remote + "/renamed");
      ok("cp", local.resolve("project/README").toString(), id + ":" + remote + "/");

      assertThat(
              sh(id, "cd " + remote + " && stat -c '%n %a' project/src/run.sh renamed/src/run.sh"))
          .isEqualTo("project/src/run.sh 750\nrenamed/src/run.sh 750\n");
      assertThat(
              sh(
                  id,
                  "cd "
                      + remote
                      + " && readlink project/link && test -d project/empty && cat README"))
          .isEqualTo("src/run.sh\nread me\n");

      Path out = Files.createDirectories(local.resolve("out"));
      ok("cp", id + ":" + remote + "/project", out.toString());
      ok("cp", id + ":" + remote + "/renamed", out.resolve("fresh").toString());
      ok("cp", id + ":" + remote + "/README", out.resolve("notes.txt").toString());

      assertThat(
              PosixFilePermissions.toString(
                  Files.getPosixFilePermissions(out.resolve("project/src/run.sh"))))
          .isEqualTo("rwxr-x---");
      assertThat(out.resolve("fresh/src/run.sh")).hasContent("#!/bin/sh\necho run");
      assertThat(Files.readSymbolicLink(out.resolve("project/link")))
          .isEqualTo(Path.of("src/run.sh"));
      assertThat(out.resolve("project/empty")).isDirectory();
      assertThat(out.resolve("notes.txt")).hasContent("read me");

      ServerProcess.Run noDir =
          paddock.cli(
              "cp", local.resolve("project/README").toString(), id + ":" + remote + "/missing/");
      assertThat(noDir.exit()).isEqualTo(2);
      assertThat(noDir.err()).contains(remote + "/missing/: no such directory in the sandbox");
      ServerProcess.Run ontoFile =
          paddock.cli("cp", local.resolve("project").toString(), id + ":" + remote + "/README");
      assertThat(ontoFile.exit()).isEqualTo(2);
      assertThat(ontoFile.err()).contains("cannot copy the directory");
    } finally {
      deleteTree(Path.of(remote));
    }
  }

  @Test
  void theCliFindsTheServerByItsRecordAndSaysWhenTheRecordIsStale() throws Exception {
    String url = paddock.start();
    Path record = paddock.dataDir().resolve(ServerRecord.FILE);
    assertThat(record).exists();
    assertThat((String) object(Files.readString(record)).get("url")).isEqualTo(url);
    ok("sandbox", "list");

    paddock.stop();
    assertThat(record).as("a clean stop removes the record").doesNotExist();
    paddock.start();
    paddock.kill();
    ServerProcess.Run stale = paddock.cli("sandbox", "list");

    assertThat(record).exists();
    assertThat(stale.exit()).isNotZero();
    assertThat(stale.err()).contains("is not running").contains(ServerRecord.FILE);
    ServerProcess.Run explicit =
        paddock.cli(Map.of("PADDOCK_URL", "http://127.0.0.1:1"), "", "sandbox", "list");
    assertThat(explicit.err())
        .as("PADDOCK_URL wins over the record")
        .contains("cannot reach http://127.0.0.1:1");
  }

  @Test
  void afterARestartTheKeyStillOpensTheSandboxAndItsTimeoutStillFires() throws Exception {
    paddock.start();
    Map<String, Object> kept = object(ok("sandbox", "create", "--json").out());
    String shortLived = create("--timeout", "8s");

    paddock.stop();
    paddock.start();

    Map<String, Object> after =
        object(ok("sandbox", "get", "--json", (String) kept.get("id")).out());
    assertThat(after.get("status")).isEqualTo("RUNNING");
    assertThat(after.get("session_api_key")).isEqualTo(kept.get("session_api_key"));
    assertThat(sh((String) kept.get("id"), "echo still here")).isEqualTo("still here\n");
    Awaitility.await("the timeout set before the restart fires after it")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> !ids(ok("sandbox", "list", "--json").out()).contains(shortLived));
    assertThat(ids(ok("sandbox", "list", "--json").out())).containsExactly(kept.get("id"));
  }

  private static void deleteTree(Path dir) throws IOException {
    if (Files.notExists(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
