package dev.paddock.backend.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.SandboxBackend;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Per-sandbox limits through cgroups, env and working directory on the process backend. */
class CgroupLimitsTest {
  @RegisterExtension final SandboxFixture fixture = new SandboxFixture();

  private static SandboxSpec limited(Resources resources) {
    return SandboxSpec.builder("process-default").resources(resources).build();
  }

  private static Resources memory(long bytes) {
    return new Resources(
        OptionalDouble.empty(), OptionalLong.of(bytes), OptionalInt.empty(), OptionalLong.empty());
  }

  private static Resources pids(int pids) {
    return new Resources(
        OptionalDouble.empty(), OptionalLong.empty(), OptionalInt.of(pids), OptionalLong.empty());
  }

  private static Resources cpus(double cpus) {
    return new Resources(
        OptionalDouble.of(cpus), OptionalLong.empty(), OptionalInt.empty(), OptionalLong.empty());
  }

  private static List<Path> limitCgroups(RuntimeHandle handle) {
    String dirs = handle.attributes().getOrDefault("limit_cgroups", "");
    return Arrays.stream(dirs.split(",")).filter(d -> !d.isBlank()).map(Path::of).toList();
  }

  /** The limit cgroup holding {@code file}, or a skip saying this host offers none. */
  private static Path cgroupWith(RuntimeHandle handle, String limit, String... files) {
    assumeTrue(
        !handle.unenforcedLimits().contains(limit),
        "this host offers Paddock no " + limit + " cgroup (needs root or a delegated cgroup)");
    return limitCgroups(handle).stream()
        .filter(d -> Arrays.stream(files).anyMatch(f -> Files.exists(d.resolve(f))))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no cgroup with " + List.of(files)));
  }

  private static String read(Path file) throws Exception {
    return Files.readString(file).strip();
  }

  @Test
  void goingPastTheMemoryLimitKillsTheCommandAndTheSandboxLivesOn() throws Exception {
    SandboxBackend backend = fixture.backend();
    RuntimeHandle handle =
        backend.start(fixture.request(fixture.newId(), limited(memory(384L << 20))));
    Path cgroup = cgroupWith(handle, "memory", "memory.limit_in_bytes", "memory.max");
    assertThat(
            Files.exists(cgroup.resolve("memory.max"))
                ? read(cgroup.resolve("memory.max"))
                : read(cgroup.resolve("memory.limit_in_bytes")))
        .isEqualTo(Long.toString(384L << 20));
    assertThat(read(cgroup.resolve("cgroup.procs")))
        .contains(Long.toString(SandboxFixture.pid(handle)));

    // tail -c keeps the last 500 MiB it read in memory: past the 384 MiB limit.
    Map<String, Object> killed =
        fixture.exec(handle, "head -c 600m /dev/zero | tail -c 500m >/dev/null", 60);

    assertThat(killed.get("exit_code")).as(killed.toString()).isEqualTo(137);
    assertThat(killed.get("oom_killed")).as(killed.toString()).isEqualTo(true);
    assertThat(backend.inspect(handle).status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(fixture.exec(handle, "echo alive", 10).get("stdout")).isEqualTo("alive\n");
  }

  @Test
  void aForkLoopStopsAtThePidsLimitAndTheSandboxSurvives() throws Exception {
    SandboxBackend backend = fixture.backend();
    RuntimeHandle handle = backend.start(fixture.request(fixture.newId(), limited(pids(200))));
    Path cgroup = cgroupWith(handle, "pids", "pids.max");
    assertThat(read(cgroup.resolve("pids.max"))).isEqualTo("200");
    String loop =
        String.join(
            "\n",
            "import os, signal",
            "kids = []",
            "try:",
            "    while len(kids) < 5000:",
            "        pid = os.fork()",
            "        if pid == 0:",
            "            signal.pause()",
            "            os._exit(0)",
            "        kids.append(pid)",
            "except OSError as e:",
            "    print('refused after', len(kids))",
            "for k in kids:",
            "    os.kill(k, 9)",
            "for k in kids:",
            "    os.waitpid(k, 0)");

    Map<String, Object> result =
        fixture.exec(handle, "python3 -c \"$(cat <<'EOF'\n" + loop + "\nEOF\n)\"", 60);

    String out = String.valueOf(result.get("stdout"));
    assertThat(out).as(result.toString()).startsWith("refused after ");
    assertThat(Integer.parseInt(out.strip().substring("refused after ".length()))).isLessThan(200);
    assertThat(read(cgroup.resolve("pids.events"))).containsPattern("max [1-9]");
    assertThat(fixture.exec(handle, "echo alive", 10).get("stdout")).isEqualTo("alive\n");
  }

  @Test
  void aCpuLimitIsAQuotaInTheCpuCgroup() throws Exception {
    SandboxBackend backend = fixture.backend();
    RuntimeHandle handle = backend.start(fixture.request(fixture.newId(), limited(cpus(0.5))));

    Path cgroup = cgroupWith(handle, "cpus", "cpu.cfs_quota_us", "cpu.max");

    if (Files.exists(cgroup.resolve("cpu.max"))) {
      assertThat(read(cgroup.resolve("cpu.max"))).isEqualTo("50000 100000");
    } else {
      assertThat(read(cgroup.resolve("cpu.cfs_quota_us"))).isEqualTo("50000");
      assertThat(read(cgroup.resolve("cpu.cfs_period_us"))).isEqualTo("100000");
    }
    assertThat(read(cgroup.resolve("cgroup.procs")))
        .contains(Long.toString(SandboxFixture.pid(handle)));
  }

  @Test
  void destroyRemovesTheLimitCgroups() throws Exception {
    SandboxBackend backend = fixture.backend();
    RuntimeHandle handle =
        backend.start(
            fixture.request(
                fixture.newId(),
                limited(
                    new Resources(
                        OptionalDouble.of(1),
                        OptionalLong.of(512L << 20),
                        OptionalInt.of(500),
                        OptionalLong.empty()))));
    List<Path> cgroups = limitCgroups(handle);
    assumeTrue(!cgroups.isEmpty(), "this host offers Paddock no limit cgroups");
    fixture.startCommand(handle, "sleep 1000");

    backend.destroy(handle);

    assertThat(cgroups).allSatisfy(dir -> assertThat(dir).doesNotExist());
  }

  @Test
  void aFailedStartLeavesNoLimitCgroup() {
    SandboxBackend backend = fixture.backend();
    String id = fixture.newId();
    SandboxSpec exits =
        SandboxSpec.builder("exits")
            .command(List.of("bash", "-c", "exit 3"))
            .resources(memory(256L << 20))
            .build();

    assertThatThrownBy(() -> backend.start(fixture.request(id, exits)))
        .isInstanceOf(RuntimeStartException.class);

    assertThat(fixture.leakedCgroups()).isEmpty();
    assertThat(fixture.sandboxDir(id)).doesNotExist();
  }

  @Test
  void limitsTheHostCannotEnforceAreReportedAndTheSandboxStartsAnyway() throws Exception {
    // The signals freezer means no cgroups at all; disk is never enforceable here.
    SandboxBackend backend = fixture.backend(Freezing.SIGNALS.settings());
    Resources all =
        new Resources(
            OptionalDouble.of(1),
            OptionalLong.of(512L << 20),
            OptionalInt.of(500),
            OptionalLong.of(1L << 30));

    RuntimeHandle handle = backend.start(fixture.request(fixture.newId(), limited(all)));

    assertThat(handle.unenforcedLimits())
        .containsExactlyInAnyOrder("disk", "memory", "pids", "cpus");
    assertThat(backend.inspect(handle).status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(backend.list())
        .filteredOn(h -> h.sandboxId().equals(handle.sandboxId()))
        .singleElement()
        .satisfies(h -> assertThat(h.unenforcedLimits()).contains("disk", "memory"));
  }

  @Test
  void theSpecsEnvironmentAndWorkingDirectoryApply() throws Exception {
    SandboxBackend backend = fixture.backend();
    String id = fixture.newId();
    SandboxSpec spec =
        SandboxSpec.builder("process-default")
            .env(Map.of("FROM_SPEC", "spec-value", "SANDBOX_VAR", "from-spec"))
            .workingDir("project/src")
            .build();

    RuntimeHandle handle = backend.start(fixture.request(id, spec));

    Map<String, Object> result = fixture.exec(handle, "pwd; echo $FROM_SPEC $SANDBOX_VAR", 10);
    assertThat(result.get("stdout"))
        .isEqualTo(
            fixture.sandboxDir(id).resolve("workspace/project/src")
                + "\nspec-value from-request\n");
  }

  @Test
  void aWorkingDirectoryOutsideTheWorkspaceOrMissingIsRefused() {
    SandboxBackend backend = fixture.backend();
    for (String dir : List.of("../escape", "/nonexistent/paddock-test-dir")) {
      String id = fixture.newId();
      SandboxSpec spec = SandboxSpec.builder("process-default").workingDir(dir).build();
      assertThatThrownBy(() -> backend.start(fixture.request(id, spec)))
          .as(dir)
          .isInstanceOf(RuntimeStartException.class)
          .hasMessageContaining("working directory");
      assertThat(fixture.sandboxDir(id)).doesNotExist();
    }
  }
}
