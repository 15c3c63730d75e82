package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the CLI module's Docker tests share: the image, the engine check, {@code paddock server}'s
 * Docker settings and the docker CLI. The tests run against the real engine, with host networking
 * (no traffic to Docker's bridge range).
 */
final class TestDocker {
  /** The image CI builds ({@code PADDOCK_TEST_DOCKER_IMAGE}), else the default sandbox image. */
  static final String IMAGE =
      Optional.ofNullable(System.getenv("PADDOCK_TEST_DOCKER_IMAGE"))
          .orElse("paddock/sandbox:bookworm");

  private TestDocker() {}

  /**
   * Skips the calling test when no engine has {@link #IMAGE}, or fails it when {@code
   * PADDOCK_TEST_REQUIRE_DOCKER=true} (CI).
   */
  static void require() {
    boolean present;
    try {
      Process info =
          new ProcessBuilder("docker", "image", "inspect", IMAGE).redirectErrorStream(true).start();
      info.getInputStream().readAllBytes();
      present = info.waitFor() == 0;
    } catch (IOException e) {
      present = false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      present = false;
    }
    if (!present && "true".equals(System.getenv("PADDOCK_TEST_REQUIRE_DOCKER"))) {
      fail("no Docker Engine with " + IMAGE + " (PADDOCK_TEST_REQUIRE_DOCKER=true)");
    }
    assumeTrue(present, "no Docker Engine with " + IMAGE + ": Docker test skipped");
  }

  /** {@code paddock server}'s settings for the Docker backend on host networking, built agent. */
  static Map<String, String> serverSettings() {
    Path agentJar =
        Path.of("..", "paddock-agent-server", "target", "paddock-agent-server-all.jar")
            .toAbsolutePath()
            .normalize();
    assertThat(agentJar).as("build the reactor first").isRegularFile();
    return Map.of(
        "RUNTIME", "docker",
        "docker.network", "host",
        "docker.pull", "never",
        "docker.image", IMAGE,
        "docker.agent-jar", agentJar.toString(),
        "docker.stop-grace", "2s",
        "docker.ready-timeout", "180s");
  }

  /** A docker CLI call's output (stdout and stderr); fails the test when it exits non-zero. */
  static String run(String... args) throws IOException, InterruptedException {
    List<String> argv = new ArrayList<>(List.of("docker"));
    argv.addAll(List.of(args));
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(String.join(" ", argv) + ": " + out).isZero();
    return out;
  }

  /** The ids of every container, running or not, labelled with {@code sandboxId}. */
  static String containers(String sandboxId) throws IOException, InterruptedException {
    return run("ps", "-aq", "--filter", "label=paddock.sandbox-id=" + sandboxId);
  }
}
