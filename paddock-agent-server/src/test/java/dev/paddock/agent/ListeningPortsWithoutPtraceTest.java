package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.paddock.backend.kit.protocol.ReadyLine;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
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

  private final HttpClient http = HttpClient.newHttpClient();
  private final List<Process> started = new ArrayList<>();
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
  void stopTheAgentAndItsCommands() throws Exception {
    for (Process agent : started) {
      List<ProcessHandle> tree = agent.descendants().toList();
      agent.destroy();
      if (!agent.waitFor(20, TimeUnit.SECONDS)) {
        agent.destroyForcibly().waitFor();
      }
      for (ProcessHandle child : tree) {
        child.destroyForcibly();
        child.onExit().get(10, TimeUnit.SECONDS);
      }
    }
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
    Path workspace = dir.resolve("workspace");
    Process agent = start(workspace);
    int port = readyPort(agent);
    assertThat(capabilities(agent.pid()) & (1L << CAP_SYS_PTRACE))
        .as("the agent runs without CAP_SYS_PTRACE")
        .isZero();

    Path portFile = workspace.resolve("port");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    HttpResponse<String> begun =
        post(
            port,
            "/api/bash/start_bash_command",
            "{\"command\": \"exec '" + java + "' '" + source + "' '" + portFile + "' hello\"}");
    assertThat(begun.statusCode()).as(begun.body()).isEqualTo(200);
    Awaitility.await("the listener's port file")
        .atMost(Duration.ofSeconds(60))
        .until(() -> Files.exists(portFile));
    int listening = Integer.parseInt(Files.readString(portFile).strip());

    HttpResponse<String> ports = get(port, ListeningPorts.ROUTE);

    assertThat(ports.statusCode()).as(ports.body()).isEqualTo(200);
    Map<String, Object> body =
        (Map<String, Object>)
            dev.paddock.http.Json.parseAny(ports.body().getBytes(StandardCharsets.UTF_8));
    assertThat((List<Object>) body.get("ports"))
        .contains(Map.of("port", listening, "address", "127.0.0.1"));
  }

  private Process start(Path workspace) throws IOException {
    List<String> argv =
        List.of(
            "/usr/bin/setpriv",
            "--bounding-set=-sys_ptrace",
            "--",
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "--enable-native-access=ALL-UNNAMED",
            "-cp",
            System.getProperty("java.class.path"),
            AgentServerMain.class.getName(),
            "--port",
            "0",
            "--no-fork-server",
            "--run-as",
            RunAsTest.NOBODY.toString(),
            "--workspace",
            workspace.toString(),
            "--events-dir",
            dir.resolve("events").toString());
    Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
    started.add(process);
    process.getOutputStream().close();
    return process;
  }

  private static int readyPort(Process agent) throws IOException {
    BufferedReader out =
        new BufferedReader(new InputStreamReader(agent.getInputStream(), StandardCharsets.UTF_8));
    for (String line; (line = out.readLine()) != null; ) {
      Optional<ReadyLine> ready = ReadyLine.parse(line);
      if (ready.isPresent()) {
        Thread.ofVirtual().start(() -> drain(out));
        return ready.get().port();
      }
    }
    throw new AssertionError("the agent exited before its ready line");
  }

  private static void drain(BufferedReader out) {
    try (out) {
      out.transferTo(java.io.Writer.nullWriter());
    } catch (IOException e) {
      // the agent is gone
    }
  }

  /** The effective capability set of a process, from {@code /proc/<pid>/status}. */
  private static long capabilities(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("CapEff:")) {
        return Long.parseUnsignedLong(line.substring(7).strip(), 16);
      }
    }
    throw new AssertionError("no CapEff line for " + pid);
  }

  private HttpResponse<String> post(int port, String path, String json) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(int port, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
