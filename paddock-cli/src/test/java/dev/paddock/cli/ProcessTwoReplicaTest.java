package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.backend.process.ProcessBackendProvider;
import dev.paddock.client.PaddockClient;
import dev.paddock.controlplane.CgroupRoots;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link TwoReplicaContract} on the process backend: both replicas run on this host and share one
 * {@code process.sandboxes-dir} (each keeps its own data dir), so either finds, freezes and stops
 * the agents the other started through their markers. Leak check: no live process whose command
 * line names the shared directory, no new {@code sb-*} cgroup, and the directory empty.
 *
 * <p>It also runs the start queue across the two replicas (one slot for the whole service): the
 * queue is control-plane logic, so one backend shows it.
 */
class ProcessTwoReplicaTest extends TwoReplicaContract {
  private Path sandboxes;
  private Set<Path> cgroupsBefore;

  @BeforeEach
  void createSharedDirectory() throws IOException {
    sandboxes = Files.createTempDirectory("paddock-replica-sandboxes-");
    cgroupsBefore = sandboxCgroups();
  }

  private final ExecutorService waiting = Executors.newVirtualThreadPerTaskExecutor();

  @AfterEach
  void stopWaitingCreates() {
    waiting.shutdownNow();
  }

  /** One slot for the whole service, and a short lease so a killed replica's entries fail soon. */
  private static final Map<String, String> ONE_SLOT =
      Map.of("PADDOCK_MAX_SANDBOXES", "1", "PADDOCK_QUEUE_LEASE", "2s");

  @Test
  void queuedCreatesAreAdmittedInArrivalOrderWhicheverReplicaTheyWaitOn() throws Exception {
    PaddockClient a = replica("a", ONE_SLOT);
    PaddockClient b = replica("b", ONE_SLOT);
    a.create(StartRequest.builder().sandboxId("holder").build(), true, Duration.ofSeconds(60));

    CompletableFuture<SandboxInfo> first = queue(a, "first");
    awaitPlace(b, "first", 1, first);
    CompletableFuture<SandboxInfo> second = queue(b, "second");
    awaitPlace(a, "second", 2, second);
    CompletableFuture<SandboxInfo> third = queue(a, "third");
    awaitPlace(b, "third", 3, third);

    b.delete("holder");
    assertThat(first.get(60, java.util.concurrent.TimeUnit.SECONDS).status())
        .isEqualTo(SandboxStatus.RUNNING);
    // A's own later create does not overtake B's earlier one, nor B's the other way round.
    awaitPlace(a, "second", 1, second);
    awaitPlace(b, "third", 2, third);
    assertThat(second).isNotDone();
    assertThat(third).isNotDone();

    a.delete("first");
    assertThat(second.get(60, java.util.concurrent.TimeUnit.SECONDS).status())
        .isEqualTo(SandboxStatus.RUNNING);
    awaitPlace(a, "third", 1, third);
    assertThat(third).isNotDone();

    a.delete("second");
    SandboxInfo last = third.get(60, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(last.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(last.sessionApiKey()).isPresent();
    assertThat(b.get("third").orElseThrow().status()).isEqualTo(SandboxStatus.RUNNING);
  }

  @Test
  void queuedCreateOfAKilledReplicaFailsSayingSoAndItsPlacePassesToTheNext() throws Exception {
    PaddockClient a = replica("a", ONE_SLOT);
    PaddockClient b = replica("b", ONE_SLOT);
    b.create(StartRequest.builder().sandboxId("holder").build(), true, Duration.ofSeconds(60));
    CompletableFuture<SandboxInfo> lost = queue(a, "lost");
    awaitPlace(b, "lost", 1, lost);
    CompletableFuture<SandboxInfo> next = queue(b, "next");
    awaitPlace(b, "next", 2, next);

    kill("a");
    assertThat(lost).failsWithin(Duration.ofSeconds(10));

    Awaitility.await("the killed replica's queued create failed by the survivor")
        .atMost(Duration.ofSeconds(30))
        .until(() -> b.get("lost").orElseThrow().status() == SandboxStatus.ERROR);
    assertThat(b.get("lost").orElseThrow().statusDetail().orElseThrow())
        .startsWith("The control plane holding this queued create stopped")
        .contains("nothing was started");
    awaitPlace(b, "next", 1, next);
    assertThat(next).isNotDone();

    b.delete("holder");
    assertThat(next.get(60, java.util.concurrent.TimeUnit.SECONDS).status())
        .isEqualTo(SandboxStatus.RUNNING);
    b.delete("lost");
    assertThat(b.get("lost")).isEmpty();
  }

  /** A create through {@code replica} that waits in the queue (up to 120 s) on its own thread. */
  private CompletableFuture<SandboxInfo> queue(PaddockClient replica, String id) {
    StartRequest request =
        StartRequest.builder().sandboxId(id).queueTimeout(Duration.ofSeconds(120)).build();
    return CompletableFuture.supplyAsync(
        () -> replica.create(request, true, Duration.ofSeconds(60)), waiting);
  }

  /**
   * Waits until {@code id}, read through {@code replica}, is queued at {@code position}; fails at
   * once, with its outcome, when the create waiting for it ended instead.
   */
  private static void awaitPlace(
      PaddockClient replica, String id, int position, CompletableFuture<SandboxInfo> create) {
    Awaitility.await(id + " queued at " + position)
        .atMost(Duration.ofSeconds(30))
        .failFast(id + "'s create ended while it should wait: " + create, create::isDone)
        .untilAsserted(
            () -> {
              SandboxInfo seen =
                  replica.get(id).orElseThrow(() -> new AssertionError(id + " gone"));
              assertThat(seen.status()).as(id + "'s status").isEqualTo(SandboxStatus.QUEUED);
              assertThat(seen.queue().map(q -> q.position()))
                  .as(id + "'s place (" + seen.queue() + ")")
                  .contains(position);
            });
  }

  @Override
  protected void removeBackendFiles() throws IOException {
    try (var paths = Files.walk(sandboxes)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  @Override
  protected Map<String, String> backendSettings() {
    return Map.of(
        "RUNTIME", "process",
        "process.sandboxes-dir", sandboxes.toString(),
        "agent.command", ProcessBackendProvider.classPathAgentCommand(),
        "process.stop-grace", "3s",
        "process.ready-timeout", "20s");
  }

  @Override
  protected long agentPid(String sandboxId) throws IOException {
    Path marker = sandboxes.resolve(sandboxId).resolve("paddock.json");
    Map<String, Object> json = JSON.std.mapFrom(Files.readString(marker));
    return Long.parseLong(String.valueOf(json.get("pid")));
  }

  @Override
  protected void assertNothingLeaked() throws Exception {
    Awaitility.await("every agent of the test gone")
        .atMost(Duration.ofSeconds(15))
        .until(() -> agents().isEmpty());
    Set<Path> cgroups = sandboxCgroups();
    cgroups.removeAll(cgroupsBefore);
    assertThat(cgroups).as("cgroups left behind").isEmpty();
    // A start killed between making its directory and writing its marker leaves a directory the
    // survivor's listing removes once the ready timeout (20 s here) passed: bounded, not leaked.
    Awaitility.await("every sandbox directory gone")
        .atMost(Duration.ofSeconds(40))
        .untilAsserted(
            () -> {
              try (var left = Files.list(sandboxes)) {
                assertThat(left.toList()).as("sandbox directories left behind").isEmpty();
              }
            });
  }

  /** Pids of live processes whose command line names the shared sandboxes directory. */
  private List<Long> agents() throws IOException {
    List<Long> pids = new ArrayList<>();
    try (var procs = Files.list(Path.of("/proc"))) {
      for (Path proc : procs.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
        try {
          String cmdline = Files.readString(proc.resolve("cmdline"), StandardCharsets.ISO_8859_1);
          if (cmdline.contains(sandboxes.toString())) {
            pids.add(Long.parseLong(proc.getFileName().toString()));
          }
        } catch (IOException e) {
          // Gone meanwhile, or not ours to read.
        }
      }
    }
    return pids;
  }

  private static Set<Path> sandboxCgroups() throws IOException {
    Set<Path> found = new HashSet<>();
    for (Path root : CgroupRoots.all()) {
      if (Files.isDirectory(root)) {
        try (var dirs = Files.list(root)) {
          dirs.filter(d -> d.getFileName().toString().startsWith("sb-")).forEach(found::add);
        }
      }
    }
    return found;
  }
}
