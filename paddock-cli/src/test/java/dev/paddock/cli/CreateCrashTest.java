package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.client.PaddockClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The hardening probe's crash window (D1, D2, D15), as the probe ran it: {@code paddock server} as
 * its own process, killed with SIGKILL while a create is under way (once the sandbox's directory,
 * its marker or its agent process appears, or 0–60 ms after the request), then started again on the
 * same data dir. Afterwards no status sits in STARTING for the start timeout, every DELETE leaves
 * no agent, directory or cgroup behind at once, and no key of those creates opens anything. A
 * delete cut short the same way is finished by the restarted control plane.
 */
class CreateCrashTest {
  /** Long start timeout: an interrupted start that waited for it would fail the test. */
  private static final Map<String, String> SETTINGS =
      Map.of("PADDOCK_START_TIMEOUT_SECONDS", "120", "process.ready-timeout", "20s");

  private static final int CYCLES = 8;

  @RegisterExtension final ServerProcess paddock = new ServerProcess();

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  /** Where in the create the control plane is killed. */
  private enum Moment {
    DIRECTORY,
    MARKER,
    AGENT,
    OFFSET
  }

  private record Created(String id, Moment moment, Optional<String> key) {}

  @Test
  void aControlPlaneKilledDuringCreatesLeavesNoAgentDirectoryCgroupOrLiveKey() throws Exception {
    long seed = System.nanoTime();
    Random random = new Random(seed);
    List<Created> created = new ArrayList<>();
    for (int cycle = 0; cycle < CYCLES; cycle++) {
      Moment moment = Moment.values()[cycle % Moment.values().length];
      PaddockClient client = client(paddock.start(SETTINGS));
      String id = "sb-crash-" + cycle + "-" + HexFormat.of().toHexDigits(random.nextInt());
      CompletableFuture<SandboxInfo> create =
          CompletableFuture.supplyAsync(
              () ->
                  client.create(
                      StartRequest.builder().sandboxId(id).build(), false, Duration.ZERO));
      reach(moment, id, random);
      paddock.kill();
      created.add(new Created(id, moment, keyOf(create)));
    }

    PaddockClient client = client(paddock.start(SETTINGS));
    List<Integer> ports = new ArrayList<>();
    for (Created c : created) {
      Optional<SandboxInfo> settled = settled(client, c.id());
      settled.ifPresent(
          info -> {
            assertThat(info.status())
                .as("seed %d, %s killed at %s: %s", seed, c.id(), c.moment(), info)
                .isIn(SandboxStatus.RUNNING, SandboxStatus.ERROR);
            if (info.status() == SandboxStatus.ERROR) {
              assertThat(info.statusDetail().orElseThrow())
                  .as("seed %d, %s killed at %s", seed, c.id(), c.moment())
                  .startsWith("The sandbox's start was interrupted by a control-plane restart");
            }
            info.agentServerUrl()
                .map(url -> Integer.parseInt(url.substring(url.lastIndexOf(':') + 1)))
                .ifPresent(ports::add);
          });
      readyPort(c.id()).ifPresent(ports::add);
    }
    for (SandboxInfo s : client.list(PageRequest.first(100)).items()) {
      client.delete(s.id());
    }

    // At once, not after a reconcile pass: DELETE itself leaves nothing.
    assertThat(client.list(PageRequest.first(100)).items()).isEmpty();
    assertThat(paddock.labelledAgents()).as("seed %d: agents left", seed).isEmpty();
    assertThat(sandboxDirs()).as("seed %d: directories left", seed).isEmpty();
    assertThat(paddock.newCgroups()).as("seed %d: cgroups left", seed).isEmpty();
    for (Created c : created) {
      for (int port : ports) {
        if (c.key().isPresent()) {
          assertThat(AgentProbe.runsCommandWith(http, port, c.key().get()))
              .as("seed %d: the key of %s opens port %d", seed, c.id(), port)
              .isFalse();
        }
      }
    }
  }

  @Test
  void aDeleteCutShortByACrashIsFinishedByTheRestartedControlPlane() throws Exception {
    PaddockClient client = client(paddock.start(SETTINGS));
    SandboxInfo first = client.create(Optional.empty(), true, Duration.ofSeconds(60));
    SandboxInfo second = client.create(Optional.empty(), true, Duration.ofSeconds(60));
    CompletableFuture.runAsync(() -> client.delete(first.id()));
    Awaitility.await("the delete under way")
        .pollInterval(Duration.ofMillis(1))
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                client
                    .get(first.id())
                    .flatMap(SandboxInfo::statusDetail)
                    .filter(d -> d.startsWith("The sandbox is being deleted"))
                    .isPresent());
    paddock.kill();

    PaddockClient restarted = client(paddock.start(SETTINGS));

    Awaitility.await("the interrupted delete finished")
        .atMost(Duration.ofSeconds(15))
        .until(() -> restarted.get(first.id()).isEmpty());
    assertThat(Path.of(paddock.dataDir().toString(), "sandboxes", first.id())).doesNotExist();
    assertThat(restarted.get(second.id()).orElseThrow().status()).isEqualTo(SandboxStatus.RUNNING);
  }

  // ------------------------------------------------------------------ helpers

  private static PaddockClient client(String url) {
    return PaddockClient.connect(URI.create(url), ServerProcess.ADMIN_KEY);
  }

  /** Returns when the create reached {@code moment}. */
  private void reach(Moment moment, String id, Random random) throws Exception {
    Path dir = paddock.dataDir().resolve("sandboxes").resolve(id);
    switch (moment) {
      case DIRECTORY -> watch(() -> Files.exists(dir));
      case MARKER -> watch(() -> Files.exists(dir.resolve("paddock.json")));
      case AGENT -> watch(() -> !labelled(id).isEmpty());
      case OFFSET ->
          // The probe's offsets: a moment in the create, not a wait for something to happen.
          TimeUnit.MILLISECONDS.sleep(random.nextInt(61));
    }
  }

  private static void watch(Callable<Boolean> reached) {
    Awaitility.await()
        .pollInterval(Duration.ofMillis(1))
        .atMost(Duration.ofSeconds(30))
        .until(reached);
  }

  /** The key the create answered with, if its answer arrived before the kill. */
  private static Optional<String> keyOf(CompletableFuture<SandboxInfo> create) {
    try {
      return create.get(10, TimeUnit.SECONDS).sessionApiKey();
    } catch (Exception e) {
      return Optional.empty();
    }
  }

  /** The sandbox once it is no longer STARTING (well within the 120 s start timeout). */
  private static Optional<SandboxInfo> settled(PaddockClient client, String id) {
    return Awaitility.await("an interrupted start of " + id + " settles")
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> client.get(id), s -> s.isEmpty() || s.get().status() != SandboxStatus.STARTING);
  }

  private Optional<Integer> readyPort(String id) throws IOException {
    Path file = paddock.dataDir().resolve("sandboxes").resolve(id).resolve("agent.port");
    return Files.exists(file)
        ? Optional.of(Integer.parseInt(Files.readString(file).trim()))
        : Optional.empty();
  }

  private List<Path> sandboxDirs() throws IOException {
    Path dir = paddock.dataDir().resolve("sandboxes");
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (var dirs = Files.list(dir)) {
      return dirs.toList();
    }
  }

  /** Live processes carrying the sandbox's label. */
  private static List<Long> labelled(String id) throws IOException {
    List<Long> pids = new ArrayList<>();
    String label = "PADDOCK_SANDBOX_ID=" + id + "\0";
    try (var procs = Files.list(Path.of("/proc"))) {
      for (Path proc : procs.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
        try {
          if (Files.readString(proc.resolve("environ"), StandardCharsets.ISO_8859_1)
              .contains(label)) {
            pids.add(Long.parseLong(proc.getFileName().toString()));
          }
        } catch (IOException e) {
          // Gone meanwhile, or not ours to read.
        }
      }
    }
    return pids;
  }
}
