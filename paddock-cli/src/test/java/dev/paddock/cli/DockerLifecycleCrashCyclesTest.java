package dev.paddock.cli;

import org.junit.jupiter.api.BeforeEach;

/**
 * {@link LifecycleCrashCyclesContract} on the Docker backend (host networking, the image CI
 * builds): one container and one workspace volume per sandbox, paused with {@code docker pause},
 * all found by their labels. Skipped without an engine that has the image, failed then in CI
 * ({@code PADDOCK_TEST_REQUIRE_DOCKER=true}).
 */
class DockerLifecycleCrashCyclesTest extends LifecycleCrashCyclesContract {
  DockerLifecycleCrashCyclesTest() {
    super(paddock -> new DockerCycleRuntimes());
  }

  @BeforeEach
  void engine() {
    TestDocker.require();
  }
}
