package dev.paddock.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.kit.RuntimeBundle;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The real Docker Engine the tests run against ({@code DOCKER_HOST}, else the local socket), the
 * sandbox image ({@code PADDOCK_TEST_DOCKER_IMAGE}, default {@code paddock/sandbox:bookworm}, built
 * by {@code build-sandbox-image.sh}), and the agent runtime bundle built once per run under {@code
 * target/}.
 *
 * <p>No engine: the tests are skipped, saying why, unless {@code PADDOCK_TEST_REQUIRE_DOCKER=true}
 * ({@code .ci/run} sets it), when they fail instead. Sandboxes use host networking so that every
 * test talks to loopback only (never to the bridge's private addresses); the bridge-mode contracts
 * reach the engine through {@link BridgeShapeEngine}, which keeps them on loopback too.
 */
final class DockerTestEngine {
  static final String IMAGE =
      Optional.ofNullable(System.getenv("PADDOCK_TEST_DOCKER_IMAGE"))
          .orElse(DockerSettings.DEFAULT_IMAGE);

  private static volatile Path bundle;

  private DockerTestEngine() {}

  static String dockerHost() {
    return Optional.ofNullable(System.getenv("DOCKER_HOST"))
        .filter(s -> !s.isBlank())
        .orElse("unix:///var/run/docker.sock");
  }

  /** The engine, or the test is skipped (failed on CI) with the reason. */
  static DockerEngine require() {
    boolean required = "true".equalsIgnoreCase(System.getenv("PADDOCK_TEST_REQUIRE_DOCKER"));
    DockerEngine engine = DockerEngine.connect(dockerHost(), Duration.ofSeconds(5));
    String problem = null;
    try {
      if (!engine.get("/_ping").ok()) {
        problem = "the Docker Engine at " + dockerHost() + " does not answer /_ping";
      } else if (!engine.get("/images/" + IMAGE + "/json").ok()) {
        problem =
            "the sandbox image "
                + IMAGE
                + " is missing: run paddock-backend-docker/src/main/sh/build-sandbox-image.sh";
      }
    } catch (DockerEngine.EngineException e) {
      problem = "no Docker Engine reachable at " + dockerHost() + " (" + e.getMessage() + ")";
    }
    if (problem != null) {
      if (required) {
        fail(problem + " (PADDOCK_TEST_REQUIRE_DOCKER=true)");
      }
      assumeTrue(false, problem);
    }
    return engine;
  }

  /** The runtime bundle, built from the agent module's shaded jar on first use. */
  static Path bundle() {
    Path built = bundle;
    if (built == null) {
      synchronized (DockerTestEngine.class) {
        built = bundle;
        if (built == null) {
          Path agentModule = Path.of("..", "paddock-agent-server").toAbsolutePath().normalize();
          Path jar = agentModule.resolve("target/paddock-agent-server-all.jar");
          if (!Files.isRegularFile(jar)) {
            fail("the agent-server's shaded jar " + jar + " is missing: build the reactor first");
          }
          built =
              RuntimeBundle.ensure(
                  Path.of("target", "docker-runtime").toAbsolutePath(),
                  jar,
                  Optional.of(agentModule.resolve("agent-jvm.options")));
          bundle = built;
        }
      }
    }
    return built;
  }

  /**
   * The OCI runtime the tests run sandboxes under: the system property {@code
   * paddock.test.docker.runtime} (the runsc execution of the isolation suite sets it), else the
   * engine's default.
   */
  static Optional<String> runtime() {
    return Optional.ofNullable(System.getProperty("paddock.test.docker.runtime"))
        .filter(s -> !s.isBlank());
  }

  /** Settings for a backend on the test engine: host networking, no pulls, short grace. */
  static Map<String, String> settings(Map<String, String> overrides) {
    Map<String, String> settings = new HashMap<>();
    settings.put("docker.host", dockerHost());
    settings.put("docker.runtime-bundle", bundle().toString());
    settings.put("docker.network", "host");
    settings.put("docker.pull", "never");
    settings.put("docker.image", IMAGE);
    settings.put("docker.stop-grace", "2s");
    settings.put("docker.ready-timeout", "60s");
    settings.put("docker.memory", "512m");
    settings.put("docker.pids-limit", "256");
    runtime().ifPresent(runtime -> settings.put("docker.runtime", runtime));
    settings.putAll(overrides);
    return settings;
  }

  static SandboxBackend backend(Map<String, String> overrides) {
    return new DockerBackendProvider().create(settings(overrides));
  }

  /**
   * Ids of every container labelled {@code paddock.managed=true}, running or not, and (as {@code
   * volume:<name>}) of every volume so labelled: workspaces must not leak either.
   */
  static Set<String> managedContainers(DockerEngine engine) {
    String filters =
        URLEncoder.encode(
            "{\"label\":[\"" + DockerBackend.LABEL_MANAGED + "=true\"]}", StandardCharsets.UTF_8);
    List<Map<String, Object>> list =
        engine.get("/containers/json?all=1&filters=" + filters).jsonList();
    Set<String> found =
        list.stream().map(c -> String.valueOf(c.get("Id"))).collect(Collectors.toSet());
    Object volumes = engine.get("/volumes?filters=" + filters).json().get("Volumes");
    if (volumes instanceof List<?> named) {
      named.forEach(v -> found.add("volume:" + ContainerState.map(v).get("Name")));
    }
    return found;
  }

  /** Fails when containers or volumes labelled by Paddock exist that were not there before. */
  static void assertNoNewContainers(DockerEngine engine, Set<String> before) {
    Set<String> now = managedContainers(engine);
    now.removeAll(before);
    now.stream()
        .filter(id -> !id.startsWith("volume:"))
        .forEach(id -> engine.delete("/containers/" + id + "?v=1&force=1"));
    now.stream()
        .filter(id -> id.startsWith("volume:"))
        .forEach(id -> engine.delete("/volumes/" + id.substring("volume:".length())));
    assertThat(now).as("containers and volumes left behind (now removed)").isEmpty();
  }

  /** Tags the test image under another name (specs are images; two specs need two names). */
  static String alias(DockerEngine engine, String tag) {
    int colon = IMAGE.lastIndexOf(':');
    String repo = colon > 0 ? IMAGE.substring(0, colon) : IMAGE;
    var response =
        engine.post(
            "/images/"
                + IMAGE
                + "/tag?repo="
                + URLEncoder.encode(repo, StandardCharsets.UTF_8)
                + "&tag="
                + tag,
            null);
    assertThat(response.status()).as(response.message()).isEqualTo(201);
    return repo + ":" + tag;
  }

  static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
