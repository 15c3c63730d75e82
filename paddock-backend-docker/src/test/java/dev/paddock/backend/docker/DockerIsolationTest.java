package dev.paddock.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.SandboxBackend;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a command inside a Docker sandbox can and cannot do, proven on a real engine: it runs as an
 * unprivileged user with no capabilities; going past the memory limit kills that command (reported
 * as an OOM kill) while the sandbox stays RUNNING and answers; a fork bomb stops at the pids limit
 * and the sandbox survives; host paths outside the mounts and the engine's socket are not there; no
 * key or secret is readable. One sandbox (256 MiB, 128 pids) serves every test.
 *
 * <p>Under gVisor the sandbox gets 1 GiB instead: the container's memory cgroup holds the Sentry
 * and, on the ptrace platform, its stub processes, which grow with the sandbox's tasks. Measured
 * here (gVisor 20221219): 44-48 MiB idle, 167-205 MiB right after the suite's 128-task bomb, and
 * past 256 MiB often enough (2 of 14 runs) that the kernel OOM-killed the whole sandbox. The case
 * that needs the 256 MiB limit (going past it) is skipped under gVisor anyway.
 */
class DockerIsolationTest {
  private static DockerEngine engine;
  private static boolean gvisor;
  private static Set<String> before;
  private static SandboxBackend backend;
  private static Sandboxes sandboxes;
  private static Sandboxes.Sandbox sandbox;

  @BeforeAll
  static void start() {
    engine = DockerTestEngine.require();
    // Asked once: the engine's runtimes do not change during the suite.
    gvisor = DockerTestEngine.runtime().filter(new EngineFeatures(engine)::gvisor).isPresent();
    before = DockerTestEngine.managedContainers(engine);
    backend = DockerTestEngine.backend(Map.of());
    sandboxes = new Sandboxes(backend);
    SandboxSpec limited =
        SandboxSpec.builder(DockerTestEngine.IMAGE)
            .workingDir("/workspace")
            .resources(
                new Resources(
                    OptionalDouble.of(1.0),
                    OptionalLong.of((underGvisor() ? 1024L : 256L) << 20),
                    OptionalInt.of(128),
                    OptionalLong.empty()))
            .build();
    sandbox = sandboxes.start("sb-isolation", limited);
  }

  @AfterAll
  static void stop() {
    if (sandboxes != null) {
      try {
        sandboxes.close();
      } finally {
        backend.close();
        DockerTestEngine.assertNoNewContainers(engine, before);
      }
    }
  }

  private static Map<String, Object> run(String command) {
    return sandboxes.exec(sandbox, command, 60);
  }

  /**
   * Runs {@code command}; when the agent gives no answer, fails at once (not an assertion an await
   * would retry) with what the backend says of the sandbox and the agent's output.
   */
  private static Map<String, Object> execOrExplain(String command, int timeoutSeconds) {
    try {
      return sandboxes.exec(sandbox, command, timeoutSeconds);
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "no answer to "
              + command
              + "; the sandbox is "
              + sandboxes.backend().inspect(sandbox.handle())
              + "; its host cgroups: "
              + hostCgroups()
              + "\nagent log:\n"
              + agentLog(),
          e);
    }
  }

  /** The container's host pids and memory counters (cgroup v1 or v2), for a failure's message. */
  private static String hostCgroups() {
    List<String> found = new ArrayList<>();
    for (String file :
        List.of(
            "pids/docker/%s/pids.current",
            "pids/docker/%s/pids.max",
            "memory/docker/%s/memory.max_usage_in_bytes",
            "system.slice/docker-%s.scope/pids.peak",
            "system.slice/docker-%s.scope/memory.peak")) {
      Path path = Path.of("/sys/fs/cgroup", file.formatted(sandbox.container()));
      try {
        found.add(path.getFileName() + "=" + Files.readString(path).trim());
      } catch (IOException | RuntimeException e) {
        // Not this cgroup layout: the other one's files are tried.
      }
    }
    return String.join(" ", found);
  }

  /** The agent's own output (the container's log), for a failure's message. */
  private static String agentLog() {
    return ContainerOutput.demultiplex(
        engine
            .get("/containers/" + sandbox.container() + "/logs?stdout=1&stderr=1&tail=40")
            .body());
  }

  private static void assertStillServing() {
    assertThat(backend.inspect(sandbox.handle()).status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(Sandboxes.stdout(run("echo still-here"))).contains("still-here");
  }

  /** The whole suite runs once under the engine's default runtime and once under runsc (CI). */
  @Test
  void theSandboxRunsUnderTheConfiguredOciRuntime() {
    String expected =
        DockerTestEngine.runtime()
            .orElseGet(() -> new EngineFeatures(engine).defaultRuntime().orElse("runc"));
    ContainerState container =
        ContainerState.parse(engine.get("/containers/" + sandbox.container() + "/json").json());
    assertThat(container.runtime()).isEqualTo(expected);
  }

  @Test
  void commandsRunAsAnUnprivilegedUserWithoutCapabilities() {
    Map<String, Object> result =
        run("id -u; id -g; id -G; grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status");
    String out = Sandboxes.stdout(result);
    assertThat(out.lines().limit(3)).containsExactly("1000", "1000", "1000");
    assertThat(out).contains("CapEff:\t0000000000000000").contains("CapPrm:\t0000000000000000");
    assertThat(out).contains("CapBnd:\t0000000000000000");
    // The workspace is theirs to write (test -O: owned by them; plain stat(2), where coreutils'
    // stat and ls use a statx flag gVisor 20221219 refuses with EINVAL).
    assertThat(Sandboxes.exitCode(run("touch /workspace/mine && test -O /workspace/mine")))
        .isZero();
  }

  @Test
  void goingPastTheMemoryLimitKillsTheCommandAndTheSandboxLivesOn() {
    // Under gVisor the container's memory cgroup holds the Sentry, which holds all of the
    // sandbox's memory: the kernel's OOM killer ends the whole sandbox, reported as such and
    // resumable on its files (DockerCrashTest proves that); it would end this suite's sandbox.
    assumeFalse(underGvisor(), "under gVisor going past the memory limit ends the sandbox");
    // tail -c keeps the last 380 MiB it read in memory: past the 256 MiB limit.
    Map<String, Object> killed = run("head -c 400m /dev/zero | tail -c 380m >/dev/null");
    assertThat(Sandboxes.exitCode(killed)).isEqualTo(137);
    assertThat(killed.get("oom_killed")).isEqualTo(true);
    assertStillServing();
  }

  @Test
  void aForkBombStopsAtThePidsLimitAndTheSandboxSurvives() {
    // Under gVisor 20221219 (ptrace) the bomb is refused at the limit every time, but about one
    // run in six the sandbox then stalls (no answer for more than 30 s) or ends (docs/SECURITY.md,
    // "The pids limit under gVisor"): on demand there, -Dpaddock.test.gvisor-fork-bomb=true.
    assumeTrue(
        !underGvisor() || Boolean.getBoolean("paddock.test.gvisor-fork-bomb"),
        "under gVisor the fork bomb runs on demand (-Dpaddock.test.gvisor-fork-bomb=true)");
    // Every level waits for its two children, so the bomb holds every pid it gets until the
    // timeout kills its whole tree.
    // Under gVisor for 2 s only: the bomb reaches the limit within a second, and every second
    // held grows gVisor's host tasks and memory (docs/SECURITY.md), which a 5 s bomb here
    // sometimes took far enough to end or stall the whole sandbox.
    Map<String, Object> bomb = execOrExplain("b() { b | b; }; b", underGvisor() ? 2 : 5);
    assertThat(bomb.get("timed_out")).isEqualTo(true);
    // Every process of the bomb was killed with its group; the sandbox answers again.
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              Map<String, Object> ps =
                  execOrExplain("ps -eo pid,ppid,pgid,stat,comm --no-headers", 60);
              assertThat(Sandboxes.stdout(ps).lines())
                  .as(() -> ps + "\nagent log:\n" + agentLog())
                  .hasSizeLessThan(20);
            });
    if (underGvisor()) {
      forksWereRefusedBySandboxKernel(bomb);
    } else {
      forksWereRefusedByTheCgroup();
    }
    assertStillServing();
  }

  private static boolean underGvisor() {
    return gvisor;
  }

  // runc: the container's pids cgroup holds the sandbox's tasks and refused forks at 128 ("max N"
  // counts refusals). Right after the bomb, a command may still wait out bash's fork retries; the
  // sandbox has survived when one runs and answers in full again.
  private static void forksWereRefusedByTheCgroup() {
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              Map<String, Object> events =
                  run(
                      "cat /sys/fs/cgroup/pids/pids.events 2>/dev/null"
                          + " || cat /sys/fs/cgroup/pids.events");
              assertThat(Sandboxes.stdout(events))
                  .as(events.toString())
                  .containsPattern("max [1-9]");
            });
    Map<String, Object> pids =
        run("cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max");
    assertThat(Sandboxes.stdout(pids).trim()).isEqualTo("128");
  }

  // gVisor: the sandbox's kernel refused the bomb's forks at the user's 128 tasks (RLIMIT_NPROC,
  // which bash reports as "Resource temporarily unavailable"), while the host cgroup, which counts
  // gVisor's own threads, has the wider safety net and was never reached (or the sandbox would
  // have died, and assertStillServing fails).
  private static void forksWereRefusedBySandboxKernel(Map<String, Object> bomb) {
    assertThat(bomb.toString()).contains("Resource temporarily unavailable");
    // Right after the bomb, gVisor may still be releasing its tasks: the shell that answers
    // needs a fork of its own.
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> assertThat(Sandboxes.stdout(execOrExplain("ulimit -u", 60))).isEqualTo("128\n"));
    Map<String, Object> host =
        ContainerState.map(
            engine.get("/containers/" + sandbox.container() + "/json").json().get("HostConfig"));
    assertThat(((Number) host.get("PidsLimit")).intValue()).isEqualTo(GvisorPids.hostLimit(128));
  }

  @Test
  void hostPathsOutsideTheMountsAndTheEngineSocketAreNotThere() {
    String out =
        Sandboxes.stdout(
            run(
                "for p in /var/run/docker.sock /run/docker.sock /work /root/.m2 /etc/paddock;"
                    + " do test -e $p && echo present:$p; done;"
                    + " awk '{print $2}' /proc/mounts | sort -u"));
    assertThat(out).doesNotContain("present:");
    List<String> expected =
        new ArrayList<>(
            List.of(
                "/",
                "/etc/hostname",
                "/etc/hosts",
                "/etc/resolv.conf",
                "/opt/paddock",
                "/workspace",
                "/usr/sbin/docker-init")); // the engine's init (pid 1), read-only
    if (underGvisor()) {
      expected.add("/tmp"); // gVisor's own tmpfs over an empty /tmp, in the sandbox's memory
    }
    assertThat(out.lines())
        .filteredOn(
            mount ->
                !mount.startsWith("/proc")
                    && !mount.startsWith("/sys")
                    && !mount.startsWith("/dev"))
        .containsExactlyInAnyOrderElementsOf(expected);
    assertThat(Sandboxes.exitCode(run("touch /opt/paddock/x"))).isNotZero();
  }

  @Test
  void noKeyOrSecretIsReadableByCommands() {
    String probe =
        "env; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline /proc/1/mem; do"
            + " cat $f 2>/dev/null | tr '\\0' '\\n'; done;"
            + " grep -rs . /var/lib/paddock-agent 2>/dev/null | head -c 100000; true";
    String seen = Sandboxes.stdout(sandboxes.exec(sandbox, probe, 30));
    assertThat(seen)
        .doesNotContain(sandbox.key())
        .doesNotContain(sandbox.adminKey())
        .doesNotContain(dev.paddock.api.KeyDigest.sha256Hex(sandbox.key()));
    if (!underGvisor()) {
      // gVisor 20221219 makes /proc/PID/environ readable by every user (mode 0444); no key is in
      // any environment (above), so that shows only the variables the spec gave commands anyway.
      assertThat(Sandboxes.exitCode(run("cat /proc/1/environ"))).isNotZero();
    }
  }
}
