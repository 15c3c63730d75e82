package dev.paddock.backend.process;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.SandboxBackend;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Real process backends over a temporary data directory, starting real agent-servers from the test
 * class path. Sandbox ids share a per-test random prefix. After each test it destroys whatever the
 * test left, then fails the test if any process still carries one of its ids, a cgroup of one of
 * them survived, or the data directory could not be removed.
 */
final class SandboxFixture implements BeforeEachCallback, AfterEachCallback {
  static final String KEY = "test-session-key-0123456789abcdef0123456789abcdef";
  static final String ADMIN_KEY = "test-admin-key-fedcba9876543210fedcba9876543210";

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final List<SandboxBackend> backends = new ArrayList<>();
  private String prefix;
  private Path dataDir;
  private int next;

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    prefix = "pt-" + UUID.randomUUID().toString().substring(0, 8) + "-";
    dataDir = Files.createTempDirectory("paddock-process-test-");
  }

  /** Settings for a backend on this test's data directory, with {@code overrides} applied. */
  Map<String, String> settings(Map<String, String> overrides) {
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("paddock.data-dir", dataDir.toString());
    settings.put("agent.command", ProcessBackendProvider.classPathAgentCommand());
    settings.put("process.stop-grace", "3s");
    settings.putAll(overrides);
    return settings;
  }

  /** A backend instance (a "control plane"); several may share the data directory. */
  SandboxBackend backend(Map<String, String> overrides) {
    SandboxBackend backend = new ProcessBackendProvider().create(settings(overrides));
    backends.add(backend);
    return backend;
  }

  SandboxBackend backend() {
    return backend(Map.of());
  }

  String newId() {
    return prefix + (next++);
  }

  Path dataDir() {
    return dataDir;
  }

  Path sandboxDir(String id) {
    return dataDir.resolve("sandboxes").resolve(id);
  }

  RuntimeRequest request(String id) {
    return request(id, SandboxSpec.builder("process-default").build());
  }

  RuntimeRequest request(String id, SandboxSpec spec) {
    return new RuntimeRequest(
        id, spec, Map.of("SANDBOX_VAR", "from-request"), List.of(sha256(KEY)), sha256(ADMIN_KEY));
  }

  static String sha256(String key) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  static int port(RuntimeHandle handle) {
    return Integer.parseInt(handle.attributes().get("port"));
  }

  static long pid(RuntimeHandle handle) {
    return Long.parseLong(handle.attributes().get("pid"));
  }

  HttpResponse<String> get(RuntimeHandle handle, String path, Optional<String> key)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(handle) + path))
            .timeout(Duration.ofSeconds(10));
    key.ifPresent(k -> request.header("X-Session-API-Key", k));
    return http.send(request.GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> post(RuntimeHandle handle, String path, String json)
      throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(handle) + path))
            .timeout(Duration.ofSeconds(10))
            .header("X-Session-API-Key", KEY)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  /** Starts {@code command} in the sandbox through the agent's bash API, without waiting. */
  void startCommand(RuntimeHandle handle, String command) throws IOException, InterruptedException {
    String body =
        "{\"command\":\""
            + command.replace("\\", "\\\\").replace("\"", "\\\"")
            + "\",\"timeout\":900}";
    HttpResponse<String> response = post(handle, "/api/bash/start_bash_command", body);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
  }

  /** Runs {@code command} through the agent and returns its JSON result. */
  Map<String, Object> exec(RuntimeHandle handle, String command, int timeoutSeconds)
      throws IOException, InterruptedException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("command", command);
    body.put("timeout", timeoutSeconds);
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port(handle) + "/api/bash/execute_bash_command"))
            .timeout(Duration.ofSeconds(timeoutSeconds + 30L))
            .header("X-Session-API-Key", KEY)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(JSON.std.asString(body)))
            .build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return JSON.std.mapFrom(response.body());
  }

  /** Live processes labelled with an id of this test. */
  List<Long> leakedProcesses() {
    ProcFs procFs = ProcFs.system();
    List<Long> pids = new ArrayList<>();
    try (Stream<Path> proc = Files.list(Path.of("/proc"))) {
      for (Path p : proc.toList()) {
        String name = p.getFileName().toString();
        if (name.chars().allMatch(Character::isDigit) && carriesPrefix(p)) {
          long pid = Long.parseLong(name);
          if (procFs.stat(pid).filter(ProcStat::alive).isPresent()) {
            pids.add(pid);
          }
        }
      }
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    return pids;
  }

  private boolean carriesPrefix(Path proc) {
    try {
      String env = new String(Files.readAllBytes(proc.resolve("environ")), StandardCharsets.UTF_8);
      return env.contains(ProcFs.LABEL + "=" + prefix);
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** Cgroups of this test's sandboxes still present. */
  List<Path> leakedCgroups() {
    List<Path> left = new ArrayList<>();
    for (Optional<Path> hierarchy :
        List.of(
            Freezers.CgroupHierarchy.v1("freezer"),
            Freezers.CgroupHierarchy.v1("memory"),
            Freezers.CgroupHierarchy.v1("pids"),
            Freezers.CgroupHierarchy.v1("cpu"),
            Freezers.CgroupHierarchy.v2())) {
      Path paddock = hierarchy.map(h -> h.resolve("paddock")).orElse(Path.of("/nonexistent"));
      if (Files.isDirectory(paddock)) {
        try (Stream<Path> children = Files.list(paddock)) {
          children.filter(c -> c.getFileName().toString().startsWith(prefix)).forEach(left::add);
        } catch (IOException e) {
          throw new AssertionError(e);
        }
      }
    }
    return left;
  }

  @Override
  public void afterEach(ExtensionContext context) throws IOException {
    List<Throwable> cleanup = new ArrayList<>();
    for (SandboxBackend backend : backends) {
      for (RuntimeHandle handle : backend.list()) {
        try {
          backend.destroy(handle);
        } catch (RuntimeException e) {
          cleanup.add(e);
        }
      }
    }
    List<Long> leaked = leakedProcesses();
    List<Path> cgroups = leakedCgroups();
    leaked.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    for (Path cgroup : cgroups) {
      Files.deleteIfExists(cgroup);
    }
    deleteTree(dataDir);
    assertThat(cleanup).as("destroy failures in cleanup").isEmpty();
    assertThat(leaked).as("processes labelled with this test's sandbox ids").isEmpty();
    assertThat(cgroups).as("cgroups of this test's sandboxes").isEmpty();
    assertThat(dataDir).doesNotExist();
  }

  private static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
