package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.client.PaddockClient;
import dev.paddock.client.PaddockClientException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Crash cycles over the whole lifecycle (issue 15), the same code for every backend: {@code paddock
 * server} as its own process, killed with SIGKILL at a random moment (fixed, printed seed) of a
 * start, a pause, a resume, a delete or an archive-before-delete (archives on, the directory
 * store), then started again on the same data dir. After every restart, once the sandboxes settled
 * (no STARTING, no delete under way, within {@link #SETTLE}), every listed sandbox's status is
 * true: RUNNING ones run a command with their current key, are not frozen and their counter process
 * advances; PAUSED ones are frozen and their counter stands still; deleted ones are gone (no
 * record, directory, process, nor anything else the backend made: cgroups, containers, volumes). No
 * key but a RUNNING sandbox's current one opens any agent, and nothing is left without a sandbox:
 * no process (found by label, command line and cgroup, so orphans re-parented to init count), no
 * directory, nor anything else the backend made. What the test sees of the backend on the machine
 * is a {@link CycleRuntimes}; each backend's test class names its own.
 *
 * <p>CI runs {@value #CI_CYCLES} cycles per backend; more on demand with the same code: {@code
 * -Dpaddock.crash-cycles=100} (and {@code -Dpaddock.crash-seed=N} for another seed); see
 * docs/RELIABILITY.md.
 */
abstract class LifecycleCrashCyclesContract {
  private static final int CI_CYCLES = 20;
  private static final int CYCLES = Integer.getInteger("paddock.crash-cycles", CI_CYCLES);
  private static final long SEED = Long.getLong("paddock.crash-seed", 20261201L);

  /** Few sandboxes at a time: enough to have every status at once, few enough for 2 cores. */
  private static final int MOST_SANDBOXES = 3;

  /** How long an interrupted operation may take to be finished or undone after a restart. */
  private static final Duration SETTLE = Duration.ofSeconds(20);

  /** How long a paused sandbox's counter is watched for not advancing. */
  private static final Duration STILL = Duration.ofMillis(600);

  static final String ID_PREFIX = "sb-cycle-";
  private static final String COUNTER = "counter";

  @RegisterExtension final ServerProcess paddock = new ServerProcess();

  private final CycleRuntimes runtimes;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final Random random = new Random(SEED);
  private final Map<String, Tracked> tracked = new LinkedHashMap<>();
  private final Map<Operation, Long> windows = new EnumMap<>(Operation.class);
  private final Map<Operation, Integer> counts = new EnumMap<>(Operation.class);
  private final Map<Operation, Integer> cutShort = new EnumMap<>(Operation.class);
  private final Map<String, Long> spent = new LinkedHashMap<>();
  private PaddockClient client;
  private int created;

  /** {@code backend}: what the test sees of the backend's sandboxes, given the server. */
  LifecycleCrashCyclesContract(Function<ServerProcess, CycleRuntimes> backend) {
    this.runtimes = backend.apply(paddock);
  }

  /** The operations a kill lands in. */
  private enum Operation {
    START(2500),
    PAUSE(300),
    RESUME(600),
    DELETE(600),
    ARCHIVED_DELETE(1500);

    /** Where kills land until the operation was seen whole (then: 0 to 1.25 × its duration). */
    final long firstWindowMillis;

    Operation(long firstWindowMillis) {
      this.firstWindowMillis = firstWindowMillis;
    }
  }

  /** What a sandbox is found as after a restart. */
  private enum Found {
    RUNNING,
    PAUSED,
    INTERRUPTED_START,
    GONE,
    /** Any other status or detail (MISSING, ERROR saying something else): never true here. */
    UNTRUE
  }

  /**
   * One sandbox of the test: what it may be found as next, the key the last reply that issued one
   * gave (keys are shown only there), and every key it was ever given.
   */
  private static final class Tracked {
    final String id;
    Set<Found> allowed;
    Optional<String> key = Optional.empty();
    final Set<String> keys = new HashSet<>();
    boolean counting;
    boolean archiveDue;
    String history = "";

    Tracked(String id, Set<Found> allowed) {
      this.id = id;
      this.allowed = EnumSet.copyOf(allowed);
    }

    void issued(SandboxInfo reply) {
      key = reply.sessionApiKey();
      key.ifPresent(keys::add);
    }

    void note(String event) {
      history += (history.isEmpty() ? "" : "; ") + event;
    }
  }

  @Test
  void everySandboxHasATrueStatusAndNothingLeaksAfterKillsAtRandomPointsOfItsLifecycle()
      throws Exception {
    System.out.printf(
        "crash cycles: %d cycles, seed %d, %s%n", CYCLES, SEED, getClass().getSimpleName());
    long began = System.nanoTime();
    List<Operation> plan = new ArrayList<>();
    boolean archives = false;
    for (int cycle = 0; cycle < CYCLES; cycle++) {
      if (plan.isEmpty()) {
        plan.addAll(List.of(Operation.values()));
        java.util.Collections.shuffle(plan, random);
      }
      Operation operation = plan.remove(0);
      // Restarted as it ran when killed: an operator restarts with the same settings.
      connect(archives);
      verify("before cycle " + cycle);
      boolean wanted = operation == Operation.ARCHIVED_DELETE;
      if (wanted != archives) {
        paddock.kill(); // nothing under way: only the settings change
        archives = wanted;
        connect(archives);
      }
      crashDuring(cycle, operation);
    }
    connect(archives);
    verify("after the last cycle");
    if (archives) {
      paddock.kill();
      connect(false);
    }
    System.out.printf(
        "crash cycles: %d cycles in %d s, seed %d; ran %s, cut short %s; %d sandboxes; ms spent %s%n",
        CYCLES,
        TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - began),
        SEED,
        counts,
        cutShort,
        tracked.size(),
        spent);
    assertThat(counts.keySet()).as("seed %d: operations run", SEED).hasSize(Math.min(CYCLES, 5));

    for (SandboxInfo s : client.list(PageRequest.first(100)).items()) {
      client.delete(s.id());
      tracked.get(s.id()).allowed = EnumSet.of(Found.GONE);
    }
    verify("after deleting every sandbox");
    assertThat(client.list(PageRequest.first(100)).items()).isEmpty();
  }

  // ------------------------------------------------------------------ one cycle

  private void connect(boolean archives) throws IOException {
    long began = System.nanoTime();
    Map<String, String> settings = new HashMap<>(runtimes.serverSettings());
    // A long start timeout: an interrupted start that waited for it would fail the settle bound.
    settings.put("PADDOCK_START_TIMEOUT_SECONDS", "120");
    settings.put("RUNTIME_FILE_ARCHIVE_ENABLED", Boolean.toString(archives));
    // A delete that went through has archived: a failed archive would block it.
    settings.put("RUNTIME_FILE_ARCHIVE_REQUIRED", Boolean.toString(archives));
    settings.put("RUNTIME_FILE_ARCHIVE_FORMAT", "tar.gz");
    client = PaddockClient.connect(URI.create(paddock.start(settings)), ServerProcess.ADMIN_KEY);
    spend("server starts", began);
  }

  private void crashDuring(int cycle, Operation operation) throws Exception {
    long preparing = System.nanoTime();
    Tracked target = prepare(operation);
    spend("preparing", preparing);
    Set<Found> before = EnumSet.copyOf(target.allowed);
    long window = windows.getOrDefault(operation, operation.firstWindowMillis);
    long killAt = random.nextLong(window + 1);
    long began = System.nanoTime();
    CompletableFuture<Long> run =
        CompletableFuture.supplyAsync(
            () -> {
              run(operation, target);
              return System.nanoTime();
            });
    // The kill point: a moment in the operation chosen by the seed, not a wait for an event.
    TimeUnit.MILLISECONDS.sleep(killAt);
    paddock.kill();
    spend("operations", began);
    Optional<Long> finished = finished(run);
    finished.ifPresent(
        end ->
            windows.put(
                operation, Math.max(20, TimeUnit.NANOSECONDS.toMillis(end - began) * 5 / 4)));
    counts.merge(operation, 1, Integer::sum);
    if (finished.isEmpty()) {
      cutShort.merge(operation, 1, Integer::sum);
    }
    target.allowed = finished.isPresent() ? done(operation) : interrupted(operation, before);
    String event =
        String.format(
            "cycle %d: %s killed at %d ms of %d (%s)",
            cycle, operation, killAt, window, finished.isPresent() ? "it had ended" : "cut short");
    target.note(event);
    System.out.printf("crash cycles: %s of %s%n", event, target.id);
  }

  /** The sandbox {@code operation} acts on, brought to a status it can act on (no kill here). */
  private Tracked prepare(Operation operation) throws Exception {
    return switch (operation) {
      case START -> {
        List<Tracked> live = present(EnumSet.allOf(Found.class));
        if (live.size() >= MOST_SANDBOXES) {
          Tracked victim = pick(live);
          client.delete(victim.id);
          victim.allowed = EnumSet.of(Found.GONE);
          victim.note("deleted to make room");
        }
        String id = ID_PREFIX + created++ + "-" + HexFormat.of().toHexDigits(random.nextInt());
        Tracked fresh = new Tracked(id, EnumSet.of(Found.GONE));
        tracked.put(id, fresh);
        yield fresh;
      }
      case PAUSE, ARCHIVED_DELETE -> running();
      case RESUME -> {
        List<Tracked> paused = present(EnumSet.of(Found.PAUSED));
        if (!paused.isEmpty()) {
          yield pick(paused);
        }
        Tracked t = running();
        client.pause(t.id);
        t.allowed = EnumSet.of(Found.PAUSED);
        t.key = Optional.empty();
        yield t;
      }
      case DELETE -> {
        List<Tracked> any = present(EnumSet.allOf(Found.class));
        yield any.isEmpty() ? running() : pick(any);
      }
    };
  }

  private void run(Operation operation, Tracked target) {
    switch (operation) {
      case START -> {
        target.issued(
            client.create(
                StartRequest.builder().sandboxId(target.id).build(), true, Duration.ofSeconds(60)));
      }
      case PAUSE -> client.pause(target.id);
      case RESUME -> target.issued(client.resume(target.id));
      case DELETE -> client.delete(target.id);
      case ARCHIVED_DELETE -> {
        target.archiveDue = true;
        client.delete(target.id);
      }
    }
  }

  /** What the sandbox must be found as when {@code operation} answered before the kill. */
  private static Set<Found> done(Operation operation) {
    return switch (operation) {
      case START, RESUME -> EnumSet.of(Found.RUNNING);
      case PAUSE -> EnumSet.of(Found.PAUSED);
      case DELETE, ARCHIVED_DELETE -> EnumSet.of(Found.GONE);
    };
  }

  /** What it may be found as when the kill cut {@code operation} short: before, or after it. */
  private static Set<Found> interrupted(Operation operation, Set<Found> before) {
    Set<Found> allowed = EnumSet.copyOf(before);
    allowed.addAll(done(operation));
    if (operation == Operation.START) {
      allowed.add(Found.INTERRUPTED_START);
    }
    return allowed;
  }

  /**
   * The time the operation ended, if it answered before the kill; empty when the kill cut it short
   * (the connection broke). An error the server answered with is a failure: nothing else ran.
   */
  private static Optional<Long> finished(CompletableFuture<Long> run) throws Exception {
    try {
      return Optional.of(run.get(30, TimeUnit.SECONDS));
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof PaddockClientException refused && refused.status() != 0) {
        throw new AssertionError("seed " + SEED + ": the operation was refused: " + refused, e);
      }
      return Optional.empty();
    }
  }

  /** A RUNNING sandbox of the test, started for the purpose when there is none. */
  private Tracked running() {
    List<Tracked> running = present(EnumSet.of(Found.RUNNING));
    if (!running.isEmpty()) {
      return pick(running);
    }
    String id = ID_PREFIX + created++ + "-" + HexFormat.of().toHexDigits(random.nextInt());
    Tracked t = new Tracked(id, EnumSet.of(Found.RUNNING));
    tracked.put(id, t);
    SandboxInfo info =
        client.create(StartRequest.builder().sandboxId(id).build(), true, Duration.ofSeconds(60));
    t.issued(info);
    startCounter(info, t);
    t.note("started for an operation");
    return t;
  }

  private List<Tracked> present(Set<Found> among) {
    return tracked.values().stream()
        .filter(t -> t.allowed.size() == 1 && among.contains(t.allowed.iterator().next()))
        .filter(t -> !t.allowed.contains(Found.GONE))
        .toList();
  }

  private Tracked pick(List<Tracked> from) {
    return from.get(random.nextInt(from.size()));
  }

  // ------------------------------------------------------------------ checks after a restart

  private void verify(String when) throws Exception {
    long began = System.nanoTime();
    Map<String, SandboxInfo> listed = settled(when);
    spend("settling", began);
    began = System.nanoTime();
    runtimes.observe();
    Map<Long, String> processes = sandboxProcesses();
    assertThat(listed.keySet())
        .as("seed %d, %s: every listed sandbox is one of the test's", SEED, when)
        .isSubsetOf(tracked.keySet());
    List<Tracked> paused = new ArrayList<>();
    for (Tracked t : tracked.values()) {
      Found found = found(Optional.ofNullable(listed.get(t.id)));
      assertThat(t.allowed)
          .as("seed %d, %s: %s (%s) found as %s", SEED, when, t.id, t.history, listed.get(t.id))
          .contains(found);
      t.allowed = EnumSet.of(found);
      if (found != Found.RUNNING) {
        t.key = Optional.empty(); // revoked by the pause, the delete or the undone start
      }
      if (found != Found.GONE) {
        t.archiveDue = false; // its archived delete was cut short before it deleted
      }
      switch (found) {
        case RUNNING -> checkRunning(t, listed.get(t.id), processes, when);
        case PAUSED -> paused.add(t);
        case INTERRUPTED_START -> checkRunsNothing(t, listed.get(t.id), processes, when);
        case GONE -> checkGone(t, processes, when);
        case UNTRUE -> throw new AssertionError("never allowed");
      }
    }
    checkFrozen(paused, processes, when);
    checkNoStrayKey(processes, when);
    checkNothingWithoutASandbox(listed, processes, when);
    spend("checks", began);
  }

  /** Adds the time since {@code began} to what {@code what} cost (printed at the end). */
  private void spend(String what, long began) {
    spent.merge(what, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began), Long::sum);
  }

  /**
   * Every listed sandbox once none is STARTING or being deleted, and every RUNNING one's owner is
   * given its current key again ({@code GET /api/v1/sandboxes/{id}}, the admin owns them all): a
   * RUNNING record whose key the control plane does not know is revoked in the store while its
   * agent may still take it, which only an operation under way (a take-over finishes it) may leave.
   */
  private Map<String, SandboxInfo> settled(String when) {
    List<Map<String, SandboxInfo>> last = new ArrayList<>(List.of(Map.of()));
    try {
      return Awaitility.await("seed " + SEED + ", " + when + ": every sandbox settles")
          .atMost(SETTLE)
          .pollInterval(Duration.ofMillis(100))
          .until(
              () -> {
                last.set(0, listedWithKeys());
                return last.get(0);
              },
              all -> all.values().stream().noneMatch(transitional()));
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(
          String.format(
              "seed %d, %s: not settled within %s (STARTING, being deleted, or RUNNING with no"
                  + " key its owner is given): %s",
              SEED, when, SETTLE, last.get(0)),
          e);
    }
  }

  private static Predicate<SandboxInfo> transitional() {
    return s ->
        s.status() == SandboxStatus.STARTING
            || (s.status() == SandboxStatus.RUNNING && s.sessionApiKey().isEmpty())
            || s.statusDetail()
                .filter(d -> d.startsWith("The sandbox is being deleted"))
                .isPresent();
  }

  /** The listing, each RUNNING sandbox as its owner gets it one by one (with its current key). */
  private Map<String, SandboxInfo> listedWithKeys() {
    Map<String, SandboxInfo> all = listed();
    for (SandboxInfo s : List.copyOf(all.values())) {
      if (s.status() == SandboxStatus.RUNNING) {
        client.get(s.id()).ifPresentOrElse(got -> all.put(s.id(), got), () -> all.remove(s.id()));
      }
    }
    return all;
  }

  private Map<String, SandboxInfo> listed() {
    Map<String, SandboxInfo> all = new LinkedHashMap<>();
    client.list(PageRequest.first(100)).items().forEach(s -> all.put(s.id(), s));
    return all;
  }

  private static Found found(Optional<SandboxInfo> info) {
    if (info.isEmpty()) {
      return Found.GONE;
    }
    SandboxInfo s = info.get();
    return switch (s.status()) {
      case RUNNING -> Found.RUNNING;
      case PAUSED -> Found.PAUSED;
      case ERROR ->
          s.statusDetail()
                  .filter(
                      d -> d.startsWith("The sandbox's start was interrupted by a control-plane"))
                  .isPresent()
              ? Found.INTERRUPTED_START
              : Found.UNTRUE;
      default -> Found.UNTRUE;
    };
  }

  /**
   * Its current key is the one last issued (the control plane gives it again to its owner: the one
   * way to learn it when the kill cut off the reply that issued it), its runtime runs and is not
   * frozen, a command runs with its key, and its counter advances.
   */
  private void checkRunning(Tracked t, SandboxInfo info, Map<Long, String> processes, String when)
      throws IOException {
    CycleRuntimes.Runtime runtime = runtimes.runtime(t.id, processesOf(t.id, processes));
    assertThat(runtime.state())
        .as("seed %d, %s: RUNNING %s (%s) runs, thawed: %s", SEED, when, t.id, t.history, runtime)
        .isEqualTo(CycleRuntimes.State.RUNS);
    if (t.key.isPresent()) {
      assertThat(info.sessionApiKey())
          .as("seed %d, %s: the key %s (%s) is given again", SEED, when, t.id, t.history)
          .isEqualTo(t.key);
    } else {
      t.issued(info);
      t.note(when + ": its key given again");
    }
    StringBuilder out = new StringBuilder();
    int exit =
        client.agent(info.withKey(t.key)).exec("echo alive-" + t.id, 10, out::append, e -> {});
    assertThat(exit)
        .as("seed %d, %s: %s (%s) runs a command", SEED, when, t.id, t.history)
        .isZero();
    assertThat(out.toString()).contains("alive-" + t.id);
    if (!t.counting) {
      startCounter(info.withKey(t.key), t);
      return;
    }
    long first = counter(t.id);
    Awaitility.await(
            "seed " + SEED + ", " + when + ": the counter of RUNNING " + t.id + " advances")
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> counter(t.id) > first);
  }

  /**
   * A command that counts in the background for the sandbox's whole life, into the file {@value
   * #COUNTER} of its workspace (where commands start): in its own session (setsid), so only a
   * freeze or the sandbox's end, not the end of the request, stops it.
   */
  private void startCounter(SandboxInfo info, Tracked t) {
    String script =
        "i=0; while :; do i=$((i+1)); echo $i > "
            + COUNTER
            + ".tmp && mv "
            + COUNTER
            + ".tmp "
            + COUNTER
            + "; sleep 0.05; done";
    int exit =
        client
            .agent(info)
            .exec(
                "setsid nohup sh -c '" + script + "' >/dev/null 2>&1 < /dev/null &",
                10,
                o -> {},
                e -> {});
    assertThat(exit).as("the counter of %s starts", t.id).isZero();
    t.counting = true;
  }

  private long counter(String id) throws IOException {
    Path file = runtimes.workspaceFile(id, COUNTER);
    if (!Files.exists(file)) {
      return 0;
    }
    String text = Files.readString(file).trim();
    return text.isEmpty() ? 0 : Long.parseLong(text);
  }

  /** Every PAUSED sandbox is frozen, and none of their counters advances meanwhile. */
  private void checkFrozen(List<Tracked> paused, Map<Long, String> processes, String when)
      throws IOException {
    Map<String, Long> at = new HashMap<>();
    for (Tracked t : paused) {
      CycleRuntimes.Runtime runtime = runtimes.runtime(t.id, processesOf(t.id, processes));
      assertThat(runtime.state())
          .as("seed %d, %s: PAUSED %s (%s) is frozen: %s", SEED, when, t.id, t.history, runtime)
          .isEqualTo(CycleRuntimes.State.FROZEN);
      at.put(t.id, counter(t.id));
    }
    if (at.isEmpty()) {
      return;
    }
    Awaitility.await(
            "seed " + SEED + ", " + when + ": the counters of PAUSED sandboxes stand still")
        .during(STILL)
        .atMost(STILL.plusSeconds(2))
        .until(() -> paused.stream().allMatch(t -> counterOrFail(t.id) == at.get(t.id)));
  }

  private long counterOrFail(String id) {
    try {
      return counter(id);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The process's state letter from {@code /proc/<pid>/stat} (R, S, D, T, Z...). */
  static char state(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    return stat.charAt(stat.lastIndexOf(')') + 2);
  }

  /** An interrupted start left no runtime: no process, no key. */
  private void checkRunsNothing(
      Tracked t, SandboxInfo info, Map<Long, String> processes, String when) throws IOException {
    assertThat(info.sessionApiKey()).as("seed %d, %s: %s has no key", SEED, when, t.id).isEmpty();
    assertThat(processesOf(t.id, processes))
        .as("seed %d, %s: processes of %s, whose start was interrupted", SEED, when, t.id)
        .isEmpty();
    CycleRuntimes.Runtime runtime = runtimes.runtime(t.id, List.of());
    assertThat(runtime.state())
        .as(
            "seed %d, %s: %s, whose start was interrupted, runs nothing: %s",
            SEED, when, t.id, runtime)
        .isEqualTo(CycleRuntimes.State.NONE);
  }

  private void checkGone(Tracked t, Map<Long, String> processes, String when) throws IOException {
    assertThat(processesOf(t.id, processes))
        .as("seed %d, %s: processes of deleted %s", SEED, when, t.id)
        .isEmpty();
    assertThat(sandboxDir(t.id)).as("seed %d, %s: its directory", SEED, when).doesNotExist();
    assertThat(runtimes.leftOf(t.id))
        .as("seed %d, %s: what deleted %s (%s) left", SEED, when, t.id, t.history)
        .isEmpty();
    if (t.archiveDue) {
      assertThat(client.archives(t.id))
          .as("seed %d, %s: %s was deleted with archives on, so it was archived", SEED, when, t.id)
          .isNotEmpty();
    }
    t.archiveDue = false;
  }

  /**
   * No key the test was ever given runs anything on any agent of a test sandbox but a RUNNING
   * sandbox's current key on its own agent. The agents are found by the sockets their processes
   * listen on, not by what the control plane lists (its URLs point at the gateway, and an agent it
   * lost track of is the one that matters). Frozen agents are left out: they answer nothing
   * (checked by the freeze).
   */
  private void checkNoStrayKey(Map<Long, String> processes, String when)
      throws IOException, InterruptedException {
    Map<Integer, String> ownerOfPort = agentPorts(processes);
    Set<String> running = new HashSet<>();
    tracked.values().stream()
        .filter(t -> t.allowed.equals(EnumSet.of(Found.RUNNING)))
        .forEach(t -> running.add(t.id));
    // Else the check below would pass for want of agents to knock on.
    assertThat(new HashSet<>(ownerOfPort.values()))
        .as("seed %d, %s: sandboxes whose agent listens", SEED, when)
        .containsAll(running);
    for (Tracked t : tracked.values()) {
      for (String key : t.keys) {
        for (Map.Entry<Integer, String> agent : ownerOfPort.entrySet()) {
          Optional<Tracked> owner = Optional.ofNullable(tracked.get(agent.getValue()));
          boolean own = owner.equals(Optional.of(t)) && t.key.equals(Optional.of(key));
          boolean frozen =
              owner.filter(o -> o.allowed.equals(EnumSet.of(Found.PAUSED))).isPresent();
          if (!own && !frozen) {
            assertThat(AgentProbe.runsCommandWith(http, agent.getKey(), key))
                .as(
                    "seed %d, %s: a key of %s (%s) opens port %d of %s",
                    SEED, when, t.id, t.history, agent.getKey(), agent.getValue())
                .isFalse();
          }
        }
      }
    }
  }

  /** The TCP ports that processes of the test's sandboxes listen on, with their sandbox. */
  private static Map<Integer, String> agentPorts(Map<Long, String> processes) throws IOException {
    Map<Long, String> ownerOfSocket = new HashMap<>();
    processes.forEach(
        (pid, owner) -> socketsOf(pid).forEach(inode -> ownerOfSocket.put(inode, owner)));
    Map<Integer, String> ownerOfPort = new HashMap<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      List<String> lines = Files.readAllLines(Path.of(table));
      for (String line : lines.subList(1, lines.size())) {
        // sl local_address rem_address st ... inode: a listening socket is in state 0A
        String[] fields = line.trim().split("\\s+");
        String owner = ownerOfSocket.get(Long.parseLong(fields[9]));
        if (fields[3].equals("0A") && owner != null) {
          String local = fields[1];
          ownerOfPort.put(Integer.parseInt(local.substring(local.indexOf(':') + 1), 16), owner);
        }
      }
    }
    return ownerOfPort;
  }

  /** The inodes of the sockets {@code pid} holds open. */
  private static List<Long> socketsOf(long pid) {
    List<Long> inodes = new ArrayList<>();
    try (var fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
      for (Path fd : (Iterable<Path>) fds::iterator) {
        String target = readLink(fd);
        if (target.startsWith("socket:[")) {
          inodes.add(Long.parseLong(target.substring(8, target.length() - 1)));
        }
      }
    } catch (IOException | java.io.UncheckedIOException e) {
      // the process ended meanwhile: it listens on nothing
    }
    return inodes;
  }

  private static String readLink(Path fd) {
    try {
      return Files.readSymbolicLink(fd).toString();
    } catch (IOException e) {
      return ""; // closed meanwhile
    }
  }

  /**
   * No process or directory of the test's sandboxes but those of listed ones (processes: of listed
   * RUNNING or PAUSED ones), nor anything else the backend made for one ({@link
   * CycleRuntimes#withoutASandbox}).
   */
  private void checkNothingWithoutASandbox(
      Map<String, SandboxInfo> listed, Map<Long, String> processes, String when)
      throws IOException {
    Set<String> live = new HashSet<>();
    listed.values().stream()
        .filter(s -> s.status() == SandboxStatus.RUNNING || s.status() == SandboxStatus.PAUSED)
        .forEach(s -> live.add(s.id()));
    assertThat(new HashSet<>(processes.values()))
        .as("seed %d, %s: sandboxes with processes", SEED, when)
        .isSubsetOf(live);
    Set<String> dirs = new HashSet<>();
    Path sandboxes = paddock.dataDir().resolve("sandboxes");
    if (Files.isDirectory(sandboxes)) {
      try (var list = Files.list(sandboxes)) {
        list.forEach(d -> dirs.add(d.getFileName().toString()));
      }
    }
    assertThat(dirs).as("seed %d, %s: sandbox directories", SEED, when).isSubsetOf(listed.keySet());
    assertThat(runtimes.withoutASandbox(listed.keySet(), live))
        .as(
            "seed %d, %s: what the backend made without a sandbox (or that runs for none)",
            SEED, when)
        .isEmpty();
  }

  // ------------------------------------------------------------------ finding processes

  /**
   * Every live process on this machine that belongs to a test sandbox, with its sandbox, found
   * three ways so that orphans re-parented to init count too: its cgroup (as the backend names it),
   * the label in its environment, and the data dir in its command line (the agent's).
   */
  private Map<Long, String> sandboxProcesses() throws IOException {
    Map<Long, String> owners = new HashMap<>();
    for (long pid : pids()) {
      owner(pid).ifPresent(owner -> owners.put(pid, owner));
    }
    return owners;
  }

  private static List<Long> processesOf(String id, Map<Long, String> processes) {
    return processes.entrySet().stream()
        .filter(e -> e.getValue().equals(id))
        .map(Map.Entry::getKey)
        .sorted()
        .toList();
  }

  private Optional<String> owner(long pid) {
    Path proc = Path.of("/proc", Long.toString(pid));
    try {
      if (state(pid) == 'Z') {
        return Optional.empty(); // a zombie runs nothing; whoever adopted it has yet to reap it
      }
      Optional<String> byCgroup = runtimes.ownerByCgroup(Files.readString(proc.resolve("cgroup")));
      if (byCgroup.isPresent()) {
        return byCgroup;
      }
      String environ = Files.readString(proc.resolve("environ"), StandardCharsets.ISO_8859_1);
      Optional<String> byLabel = testIdAfter("\0" + environ, "\0PADDOCK_SANDBOX_ID=", '\0');
      if (byLabel.isPresent()) {
        return byLabel;
      }
      String cmdline = Files.readString(proc.resolve("cmdline"), StandardCharsets.ISO_8859_1);
      return testIdAfter(cmdline, paddock.dataDir().resolve("sandboxes") + "/", '/');
    } catch (IOException e) {
      return Optional.empty(); // gone meanwhile, or not ours to read
    }
  }

  /** The test's sandbox id that follows {@code marker} in {@code text}, up to {@code end}. */
  static Optional<String> testIdAfter(String text, String marker, char end) {
    int at = text.indexOf(marker + ID_PREFIX);
    if (at < 0) {
      return Optional.empty();
    }
    int from = at + marker.length();
    int to = from;
    while (to < text.length() && text.charAt(to) != end && text.charAt(to) != '\0') {
      to++;
    }
    return Optional.of(text.substring(from, to));
  }

  private static List<Long> pids() throws IOException {
    try (var procs = Files.list(Path.of("/proc"))) {
      return procs
          .map(p -> p.getFileName().toString())
          .filter(n -> n.matches("\\d+"))
          .map(Long::parseLong)
          .toList();
    }
  }

  private Path sandboxDir(String id) {
    return paddock.dataDir().resolve("sandboxes").resolve(id);
  }
}
