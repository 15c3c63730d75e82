package dev.paddock.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.SandboxBackend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Start failures the operator must be told apart: an image of another CPU architecture (the kernel
 * refuses its binaries with {@code exec format error}) and a full disk. Users see the class's safe
 * message; the raw text stays in the detail.
 */
class FailureTextTest {
  private DockerEngine engine;
  private Set<String> before;
  private SandboxBackend backend;
  private Sandboxes sandboxes;

  @BeforeEach
  void setUp() {
    engine = DockerTestEngine.require();
    before = DockerTestEngine.managedContainers(engine);
    backend = DockerTestEngine.backend(Map.of());
    sandboxes = new Sandboxes(backend);
  }

  @AfterEach
  void tearDown() {
    try {
      sandboxes.close();
    } finally {
      backend.close();
      DockerTestEngine.assertNoNewContainers(engine, before);
    }
  }

  @Test
  void anImageForAnotherArchitectureIsWrongArchitecture() throws IOException {
    Path root = Sandboxes.tempDir("paddock-foreign-arch-");
    String image = "paddock-test/foreign-arch:latest";
    try {
      Files.createDirectories(root.resolve("bin"));
      Path shell = root.resolve("bin/sh");
      Files.write(shell, foreignElfHeader());
      shell.toFile().setExecutable(true, false);
      Sandboxes.importImage(engine, root, image);

      RuntimeStartException failure =
          catchThrowableOfType(
              RuntimeStartException.class,
              () -> sandboxes.start("sb-foreign", SandboxSpec.builder(image).build()));

      assertThat(failure).as("the start of an image of another architecture").isNotNull();
      assertThat(failure.failure().kind()).isEqualTo(Kind.IMAGE_WRONG_ARCHITECTURE);
      assertThat(failure.failure().rawDetail()).containsIgnoringCase("exec format error");
      assertThat(failure.getMessage()).doesNotContain(root.toString());
    } finally {
      engine.delete("/images/" + image + "?force=1");
      DockerTestEngine.deleteTree(root);
    }
  }

  @Test
  void statsOfARunningContainerComeFromTheEngineAndEndWithIt() throws Exception {
    var handle =
        sandboxes.start("sb-stats", SandboxSpec.builder(DockerTestEngine.IMAGE).build()).handle();

    var stats = backend.stats(handle).orElseThrow();

    assertThat(stats.cpuSeconds()).isPositive(); // the agent's JVM started in it
    assertThat(stats.memoryBytes()).isGreaterThan(10L << 20);
    assertThat(stats.pids()).isPositive();
    assertThat(stats.networkRxBytes()).as("host networking: no interfaces of its own").isEmpty();
    backend.destroy(handle);
    assertThat(backend.stats(handle)).isEmpty();
  }

  @Test
  void theEnginesOrTheAgentsWordsAreClassifiedBeforeTheExitCode() {
    assertThat(ContainerStart.exitKind(1, false, List.of("exec /bin/sh: exec format error")))
        .isEqualTo(Kind.IMAGE_WRONG_ARCHITECTURE);
    assertThat(
            ContainerStart.exitKind(
                1, false, List.of("java.io.IOException: No space left on device")))
        .isEqualTo(Kind.DISK_FULL);
    assertThat(FailureText.classify("write /var/lib/docker/tmp: no space left on device"))
        .contains(Kind.DISK_FULL);
    assertThat(FailureText.classify("exited with code 3")).isEmpty();
    assertThat(Kind.DISK_FULL.safeMessage()).doesNotContain("/var");
  }

  /**
   * A 64-bit ELF header for a machine this host is not (AArch64 on x86-64, x86-64 elsewhere): the
   * kernel's ELF loader rejects it with ENOEXEC, as it would a real binary of that architecture.
   */
  private static byte[] foreignElfHeader() {
    boolean onArm = System.getProperty("os.arch").equals("aarch64");
    ByteBuffer elf = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
    elf.put(new byte[] {0x7f, 'E', 'L', 'F', 2, 1, 1, 0});
    elf.position(16);
    elf.putShort((short) 2); // ET_EXEC
    elf.putShort((short) (onArm ? 62 : 183)); // EM_X86_64 or EM_AARCH64
    elf.putInt(1); // EV_CURRENT
    elf.putLong(0x400000); // entry
    elf.putLong(64); // program headers right after this header (none)
    elf.putLong(0);
    elf.putInt(0);
    elf.putShort((short) 64); // header size
    elf.putShort((short) 56);
    elf.putShort((short) 0);
    return elf.array();
  }
}
