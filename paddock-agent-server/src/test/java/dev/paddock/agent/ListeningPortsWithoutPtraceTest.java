package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The agent as the Docker backend runs it: root without {@code CAP_SYS_PTRACE}, commands as another
 * user ({@code --run-as}). Such an agent may not read that user's {@code /proc/<pid>/fd}, so it
 * reads them with the user's file-system ids: a port a command listens on is listed. The agent is
 * its own process, started under {@code setpriv --bounding-set=-sys_ptrace}. Needs root and
 * util-linux's {@code setpriv} (CI has both).
 */
class ListeningPortsWithoutPtraceTest {
  private static final int CAP_SYS_PTRACE = 19;

  private Path dir;

  @BeforeEach
  void needsRootAndSetpriv() throws IOException {
    assumeThat(System.getProperty("user.name"))
        .as("running commands as another user needs root")
        .isEqualTo("root");
    assumeThat(Files.isExecutable(Path.of("/usr/bin/setpriv"))).as("setpriv").isTrue();
    // Readable by the command user (nobody), unlike a JUnit temp dir.
    dir =
        Files.createTempDirectory(
            "paddock-ports-ptrace-",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
  }

  @AfterEach
  void deleteTheDirectory() throws IOException {
    if (dir != null) {
      try (Stream<Path> paths = Files.walk(dir)) {
        for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void aPortOfTheCommandUserIsListedByAnAgentWithoutPtrace() throws Exception {
    Path source = dir.resolve("Listener.java");
    try (InputStream in = ListeningPortsTest.class.getResourceAsStream("Listener.java")) {
      Files.write(source, in.readAllBytes());
    }
    try (AgentProcess agent =
        AgentProcess.start(
            List.of("/usr/bin/setpriv", "--bounding-set=-sys_ptrace", "--"),
            dir,
            List.of("--run-as", RunAsTest.NOBODY.toString()))) {
      assertThat(AgentProcess.statusMask(agent.pid(), "CapEff") & (1L << CAP_SYS_PTRACE))
          .as("the agent runs without CAP_SYS_PTRACE")
          .isZero();

      Path portFile = dir.resolve("workspace").resolve("port");
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      HttpResponse<String> begun =
          agent.post(
              "/api/bash/start_bash_command",
              "{\"command\": \"exec '" + java + "' '" + source + "' '" + portFile + "' hello\"}");
      assertThat(begun.statusCode()).as(begun.body()).isEqualTo(200);
      Awaitility.await("the listener's port file")
          .atMost(Duration.ofSeconds(60))
          .until(() -> Files.exists(portFile));
      int listening = Integer.parseInt(Files.readString(portFile).strip());

      HttpResponse<String> ports = agent.get(ListeningPorts.ROUTE);

      assertThat(ports.statusCode()).as(ports.body()).isEqualTo(200);
      Map<String, Object> body =
          (Map<String, Object>)
              dev.paddock.http.Json.parseAny(ports.body().getBytes(StandardCharsets.UTF_8));
      assertThat((List<Object>) body.get("ports"))
          .contains(Map.of("port", listening, "address", "127.0.0.1"));
    }
  }
}
