package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.client.PaddockClient;
import dev.paddock.store.SandboxRecord;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A RUNNING sandbox whose agent is alive but too slow to answer the backend's probe (here: stopped
 * with SIGSTOP for one reconcile pass, as a loaded host or a long GC would hold it) stays RUNNING
 * with its key. Found by the load suite (paddock-hardening's LoadTest, 50 sandboxes started at
 * once): the reconcile adopted the probe's STARTING, which revoked the key in the store, and the
 * next pass adopted RUNNING without one, so a create that waited answered RUNNING with no key.
 */
class SlowAgentReconcileTest {
  @RegisterExtension final ControlPlane plane = new ControlPlane();

  @Test
  void reconcileKeepsASlowAgentRunningWithItsKey() throws Exception {
    PaddockClient admin = PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY);
    SandboxInfo running = admin.create(Optional.empty(), true, Duration.ofSeconds(60));
    String key = running.sessionApiKey().orElseThrow();
    RuntimeHandle handle = record(running.id()).runtime().orElseThrow();
    long agent = agentPid();

    signal("STOP", agent);
    try {
      assertThat(plane.backend().inspect(handle).status())
          .as("what the backend says of an agent that does not answer its probe")
          .isEqualTo(SandboxStatus.STARTING);
      plane.reconcile();
      SandboxRecord during = record(running.id());
      assertThat(during.status()).isEqualTo(SandboxStatus.RUNNING);
      assertThat(during.sessionKeyHash()).isPresent();
    } finally {
      signal("CONT", agent);
    }
    plane.reconcile();

    Awaitility.await("the owner is given the same key again")
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> admin.get(running.id()).orElseThrow(),
            i -> i.status() == SandboxStatus.RUNNING && i.sessionApiKey().equals(Optional.of(key)));
    StringBuilder out = new StringBuilder();
    SandboxInfo after = admin.get(running.id()).orElseThrow();
    assertThat(admin.agent(after).exec("echo still", 10, out::append, s -> {})).isZero();
    assertThat(out).hasToString("still\n");
  }

  private SandboxRecord record(String id) {
    return plane.store().find(id).orElseThrow();
  }

  /** The one agent-server this test's control plane started (a child process of this JVM). */
  private static long agentPid() {
    List<Long> agents =
        ProcessHandle.current()
            .descendants()
            .filter(p -> cmdline(p.pid()).contains("dev.paddock.agent.AgentServerMain"))
            .map(ProcessHandle::pid)
            .toList();
    assertThat(agents).as("agent processes").hasSize(1);
    return agents.getFirst();
  }

  private static String cmdline(long pid) {
    try {
      return Files.readString(
          Path.of("/proc", Long.toString(pid), "cmdline"), StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      return ""; // gone meanwhile
    }
  }

  private static void signal(String name, long pid) throws IOException, InterruptedException {
    Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start();
    assertThat(kill.waitFor()).as("kill -%s %d", name, pid).isZero();
  }
}
