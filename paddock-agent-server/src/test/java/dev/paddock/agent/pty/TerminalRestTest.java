package dev.paddock.agent.pty;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.agent.core.KeyRing;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Terminals through their REST routes: a real shell on a real pseudo-terminal. */
class TerminalRestTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private final TerminalClient terminals = new TerminalClient(agent);

  @Test
  void shellRunsWhatIsTypedOnATerminal() throws Exception {
    String id = terminals.create("{}");
    terminals.type(id, "echo $((6*7)); tty; [ -t 0 ] && echo is-a-$((1+1))-tty\r");

    String output = terminals.awaitOutput(id, "is-a-2-tty");
    assertThat(output).contains("42\r\n").containsPattern("/dev/pts/\\d+\r\n");
    assertThat(terminals.info(id))
        .containsEntry("status", "running")
        .containsEntry("cols", 80)
        .containsEntry("rows", 24)
        .containsEntry("cwd", agent.workspace().toString());
  }

  @Test
  void terminalLeadsItsOwnSessionWithTheTerminalAsController() throws Exception {
    String id = terminals.create("{\"command\": \"ps -o sid=,tty= -p $$; echo done\"}");
    String output = terminals.awaitOutput(id, "done");
    long pid = ((Number) terminals.info(id).get("pid")).longValue();
    assertThat(output).containsPattern("\\s*" + pid + " pts/\\d+");
  }

  @Test
  void resizeChangesTheWindowSizeProgramsSee() throws Exception {
    String id = terminals.create("{\"cols\": 100, \"rows\": 30}");
    terminals.type(id, "stty size\r");
    terminals.awaitOutput(id, "30 100");

    HttpResponse<String> resized =
        agent.postJson("/api/terminals/" + id + "/resize", "{\"cols\": 132, \"rows\": 43}");
    assertThat(resized.statusCode()).as(resized.body()).isEqualTo(200);
    terminals.type(id, "stty size\r");

    terminals.awaitOutput(id, "43 132");
    assertThat(terminals.info(id)).containsEntry("cols", 132).containsEntry("rows", 43);
  }

  @Test
  void exitCodeIsReported() throws Exception {
    String id = terminals.create("{\"command\": \"echo bye; exit 7\"}");

    Map<String, Object> ended = terminals.awaitExit(id);

    assertThat(ended).containsEntry("exit_code", 7);
    assertThat(ended.get("exited_at")).isNotNull();
    assertThat(terminals.output(id)).contains("bye");
  }

  @Test
  void outputFromAnOffsetHasOnlyTheRest() throws Exception {
    String id = terminals.create("{\"command\": \"printf 'first:'; read line; printf 'second'\"}");
    terminals.awaitOutput(id, "first:");
    HttpResponse<String> start = agent.get("/api/terminals/" + id + "/output");
    long next = Long.parseLong(start.headers().firstValue("X-Paddock-Output-Next").orElseThrow());
    terminals.type(id, "x\r");
    terminals.awaitExit(id);

    HttpResponse<String> rest = agent.get("/api/terminals/" + id + "/output?since=" + next);

    assertThat(rest.body()).isEqualTo("x\r\nsecond");
    assertThat(rest.headers().firstValue("X-Paddock-Output-Offset")).hasValue(Long.toString(next));
  }

  @Test
  void interruptReachesTheForegroundProgramOnly() throws Exception {
    String id = terminals.create("{}");
    // The shell reads its input first, so the sleep below is a job of the interactive shell.
    terminals.type(id, "echo ready-$((6*7))\r");
    terminals.awaitOutput(id, "ready-42\r\n");
    terminals.type(id, "sleep 100\r");
    Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> childrenNamed("sleep").stream().anyMatch(TerminalRestTest::inForeground));

    HttpResponse<String> signalled =
        agent.postJson("/api/terminals/" + id + "/signal", "{\"signal\": \"SIGINT\"}");

    assertThat(signalled.statusCode()).as(signalled.body()).isEqualTo(200);
    terminals.type(id, "echo status=$?\r");
    terminals.awaitOutput(id, "status=130\r\n");
    assertThat(terminals.info(id)).containsEntry("status", "running");
  }

  @Test
  void deleteEndsTheWholeSessionBackgroundJobsIncluded() throws Exception {
    String id = terminals.create("{}");
    terminals.type(
        id, "sleep 1000 & nohup sleep 1001 >/dev/null 2>&1 & echo pids=$(jobs -p | tr '\\n' ,)\r");
    String output = terminals.awaitOutput(id, ",\r\n");
    List<Long> jobs = pids(output);
    assertThat(jobs).hasSize(2);

    HttpResponse<String> deleted = agent.delete("/api/terminals/" + id);

    assertThat(deleted.statusCode()).as(deleted.body()).isEqualTo(200);
    assertThat(AgentFixture.json(deleted)).containsEntry("status", "exited");
    for (long pid : jobs) {
      assertThat(running(pid)).as("job " + pid + " running").isFalse();
    }
    assertThat(agent.get("/api/terminals/" + id).statusCode()).isEqualTo(404);
  }

  @Test
  void closingTheAgentEndsEveryTerminal() throws Exception {
    String first = terminals.create("{}");
    String second = terminals.create("{\"command\": \"sleep 1002\"}");
    terminals.type(first, "sleep 1003 & echo pids=$(jobs -p | tr '\\n' ,)\r");
    List<Long> jobs = pids(terminals.awaitOutput(first, ",\r\n"));
    long secondPid = ((Number) terminals.info(second).get("pid")).longValue();

    agent.server().close();

    assertThat(running(jobs.get(0))).isFalse();
    assertThat(running(secondPid)).isFalse();
  }

  @Test
  void terminalsGetTheCommandEnvironmentWithoutKeys() throws Exception {
    String id =
        terminals.create(
            "{\"command\": \"env; echo; cat /proc/$$/environ; echo; echo end-of-env\","
                + " \"env\": {\"GREETING\": \"hello\"}}");
    String output = terminals.awaitOutput(id, "end-of-env");
    assertThat(output)
        .contains("GREETING=hello", "TERM=xterm-256color", "PADDOCK_SANDBOX=1")
        .doesNotContain("SESSION_API_KEY")
        .doesNotContain(AgentFixture.KEY)
        .doesNotContain(AgentFixture.ADMIN_KEY)
        .doesNotContain(KeyRing.sha256Hex(AgentFixture.KEY));
  }

  /**
   * The temporary directory is the machine's and other builds write to it meanwhile, so a new entry
   * counts as the terminal's when this JVM holds it open or mapped (an extracted native library, as
   * pty4j would leave) or its name says it is a terminal's.
   */
  @Test
  void terminalsLeaveNoTemporaryFiles() throws Exception {
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    List<Path> before = list(tmp);
    String id = terminals.create("{\"command\": \"echo made\"}");
    terminals.awaitExit(id);

    List<Path> added = list(tmp).stream().filter(p -> !before.contains(p)).toList();
    String held = heldByThisProcess();
    assertThat(added)
        .noneMatch(p -> held.contains(p.toString()))
        .noneMatch(p -> p.getFileName().toString().matches("(?i).*(pty|terminal|jna).*"));
  }

  /** Every path this JVM has open or mapped, one per line. */
  private static String heldByThisProcess() throws Exception {
    StringBuilder held = new StringBuilder(Files.readString(Path.of("/proc/self/maps")));
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : fds.toList()) {
        try {
          held.append('\n').append(Files.readSymbolicLink(fd));
        } catch (java.io.IOException closedMeanwhile) {
          // The listing's own descriptor, or one closed since: neither is a leftover.
        }
      }
    }
    return held.toString();
  }

  @Test
  void listShowsRunningAndEndedTerminals() throws Exception {
    String ended = terminals.create("{\"command\": \"true\"}");
    terminals.awaitExit(ended);
    String running = terminals.create("{}");

    Object list = AgentFixture.jsonAny(agent.get("/api/terminals"));

    assertThat(list)
        .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST)
        .extracting(t -> ((Map<?, ?>) t).get("id") + "=" + ((Map<?, ?>) t).get("status"))
        .containsExactly(ended + "=exited", running + "=running");
  }

  @Test
  void badRequestsAreAnsweredWithTheReason() throws Exception {
    assertDetail(agent.postJson("/api/terminals", "{\"cwd\": \"missing\"}"), 400, "cwd");
    assertDetail(agent.postJson("/api/terminals", "{\"cols\": 0}"), 422, "cols");
    assertDetail(agent.postJson("/api/terminals", "{\"shell\": \"zsh\"}"), 422, "shell");
    assertDetail(
        agent.postJson("/api/terminals", "{\"env\": {\"A=B\": \"c\"}}"), 400, "environment");
    assertDetail(agent.get("/api/terminals/nope"), 404, "nope");
    String id = terminals.create("{}");
    assertDetail(
        agent.postJson("/api/terminals/" + id + "/signal", "{\"signal\": \"BOGUS\"}"),
        422,
        "BOGUS");
    assertDetail(
        agent.postJson("/api/terminals/" + id + "/resize", "{\"cols\": 5000, \"rows\": 1}"),
        422,
        "cols");
    assertDetail(agent.get("/api/terminals/" + id + "/output?since=-1"), 422, "since");
  }

  @Test
  void terminalRoutesNeedTheKey() throws Exception {
    HttpResponse<String> refused =
        agent.send(
            HttpRequest.newBuilder(agent.uri("/api/terminals"))
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build());
    assertThat(refused.statusCode()).isEqualTo(401);
    assertThat(AgentFixture.jsonAny(agent.get("/api/terminals"))).isEqualTo(List.of());
  }

  private static void assertDetail(HttpResponse<String> response, int status, String mention) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    assertThat((String) AgentFixture.json(response).get("detail")).contains(mention);
  }

  private static List<Long> pids(String output) {
    Matcher m = Pattern.compile("pids=([0-9,]+),\r\n").matcher(output);
    assertThat(m.find()).as(output).isTrue();
    return Stream.of(m.group(1).split(",")).map(Long::parseLong).toList();
  }

  /**
   * Whether {@code pid} is a live process: a zombie is not (orphans are re-parented to a PID 1 that
   * may never reap them).
   */
  static boolean running(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      return !stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
    } catch (java.io.IOException e) {
      return false;
    }
  }

  /** Whether the process leads its terminal's foreground group ({@code tpgid == pgrp}). */
  private static boolean inForeground(ProcessHandle process) {
    try {
      String stat = Files.readString(Path.of("/proc/" + process.pid() + "/stat"));
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return fields[2].equals(fields[5]);
    } catch (java.io.IOException e) {
      return false;
    }
  }

  private static List<ProcessHandle> childrenNamed(String name) {
    return ProcessHandle.current()
        .descendants()
        .filter(p -> p.info().command().map(c -> c.endsWith("/" + name)).orElse(false))
        .toList();
  }

  private static List<Path> list(Path dir) throws Exception {
    try (Stream<Path> entries = Files.list(dir)) {
      return entries
          .filter(p -> !p.getFileName().toString().startsWith("paddock-agent-test-"))
          .toList();
    }
  }
}
