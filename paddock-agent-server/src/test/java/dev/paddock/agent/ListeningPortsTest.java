package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

class ListeningPortsTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  /** Starts the test web server as a command of the agent; answers the port it listens on. */
  private int startListener() throws Exception {
    Path scratch = agent.scratch();
    Path source = scratch.resolve("Listener.java");
    try (InputStream in = ListeningPortsTest.class.getResourceAsStream("Listener.java")) {
      Files.write(source, in.readAllBytes());
    }
    Path portFile = scratch.resolve("port");
    String java = ProcessHandle.current().info().command().orElseThrow();
    new BashClient(agent)
        .start("command", "exec '" + java + "' '" + source + "' '" + portFile + "' hello");
    Awaitility.await("the listener's port file")
        .atMost(Duration.ofSeconds(30))
        .until(() -> Files.exists(portFile));
    return Integer.parseInt(Files.readString(portFile).strip());
  }

  @SuppressWarnings("unchecked")
  private List<Map<String, Object>> ports() throws Exception {
    HttpResponse<String> response = agent.get(ListeningPorts.ROUTE);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return (List<Map<String, Object>>) AgentFixture.json(response).get("ports");
  }

  @Test
  void listsAPortACommandListensOnButNotTheAgentsOwnNorOneOfAnotherProcess() throws Exception {
    try (ServerSocket outsider = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      int port = startListener();

      List<Map<String, Object>> ports = ports();

      assertThat(ports).contains(Map.of("port", port, "address", "127.0.0.1"));
      // This JVM is the agent's own process, not one of its descendants: its sockets (the
      // agent's listening port, and one the test opened) are not the sandbox's.
      assertThat(ports)
          .extracting(p -> p.get("port"))
          .doesNotContain(agent.server().port(), outsider.getLocalPort());
    }
  }

  @Test
  void aPortIsGoneFromTheListOnceItsCommandEnds() throws Exception {
    int port = startListener();
    assertThat(ports()).extracting(p -> p.get("port")).contains(port);

    new BashClient(agent)
        .execute("command", "pkill -f '" + agent.scratch().resolve("Listener.java") + "'");
    Awaitility.await("the port leaves the list")
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () -> assertThat(ports()).extracting(p -> p.get("port")).doesNotContain(port));
  }

  @Test
  void theListNeedsTheSessionKey() throws Exception {
    HttpResponse<String> response =
        agent.send(HttpRequest.newBuilder(agent.uri(ListeningPorts.ROUTE)).GET().build());
    assertThat(response.statusCode()).isEqualTo(401);
  }

  @Test
  void rowsOfBothTablesAreReadAndOnlyListeningOnesCount() {
    assertThat(
            ListeningPorts.parse(
                "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000"
                    + "  1000        0 123456 1 0000000000000000 100 0 0 10 0"))
        .contains(new ListeningPorts.Socket(8080, "127.0.0.1", true, 123456));
    assertThat(
            ListeningPorts.parse(
                "   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000"
                    + "  1000        0 777 1 0000000000000000 20 4 30 10 -1"))
        .hasValueSatisfying(s -> assertThat(s.listening()).isFalse());
    assertThat(
            ListeningPorts.parse(
                "   0: 00000000000000000000000001000000:0050 00000000000000000000000000000000:0000"
                    + " 0A 00000000:00000000 00:00000000 00000000  1000        0 42 1"))
        .contains(new ListeningPorts.Socket(80, "0:0:0:0:0:0:0:1", true, 42));
    assertThat(
            ListeningPorts.parse(
                "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt"
                    + "   uid  timeout inode"))
        .isEmpty();
    assertThat(ListeningPorts.parse("   0: ZZ:1F90 00000000:0000 0A a b c d e f")).isEmpty();
  }

  @Test
  void aProcTableWithoutTheFilesOrProcessesListsNothing(@TempDir Path emptyProc) {
    ListeningPorts ports =
        new ListeningPorts(
            emptyProc,
            () -> Stream.of(ProcessHandle.current()),
            () -> 0,
            java.util.Optional.empty());
    assertThat(ports.list()).isEmpty();
    ListeningPorts none =
        new ListeningPorts(Path.of("/proc"), Stream::empty, () -> 0, java.util.Optional.empty());
    assertThat(none.list()).isEmpty();
  }

  @Test
  void theTestsOwnSocketIsFoundWhenItsProcessIsTheTree() throws Exception {
    try (ServerSocket own = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      ListeningPorts ports =
          new ListeningPorts(
              Path.of("/proc"),
              () -> Stream.of(ProcessHandle.current()),
              () -> 0,
              java.util.Optional.empty());
      assertThat(ports.list())
          .contains(new ListeningPorts.Listening(own.getLocalPort(), "127.0.0.1"));
    }
  }
}
