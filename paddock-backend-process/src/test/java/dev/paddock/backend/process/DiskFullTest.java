package dev.paddock.backend.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.SandboxBackend;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A data directory on a full file system (a small tmpfs whose inodes this test used up): the start
 * fails as DISK_FULL with a safe message, and leaves nothing behind. Needs root (to mount).
 */
class DiskFullTest {
  @RegisterExtension final SandboxFixture fixture = new SandboxFixture();

  @Test
  void aFullDataDirectoryIsDiskFull() throws Exception {
    Assumptions.assumeTrue(
        "root".equals(System.getProperty("user.name")), "needs root to mount a small tmpfs");
    Path mount = Files.createDirectory(fixture.dataDir().resolve("full"));
    run(
        "mount",
        "-t",
        "tmpfs",
        "-o",
        "size=1m,nr_inodes=64",
        "paddock-test-full",
        mount.toString());
    try {
      SandboxBackend backend = fixture.backend(Map.of("paddock.data-dir", mount.toString()));
      fill(mount);
      String id = fixture.newId();

      RuntimeStartException failure =
          catchThrowableOfType(
              RuntimeStartException.class, () -> backend.start(fixture.request(id)));

      assertThat(failure).as("a start on a full disk").isNotNull();
      assertThat(failure.failure().kind()).isEqualTo(Kind.DISK_FULL);
      assertThat(failure.failure().rawDetail()).containsIgnoringCase("no space left on device");
      assertThat(Kind.DISK_FULL.safeMessage()).doesNotContain(mount.toString());
      assertThat(ProcFs.system().labelled(id)).isEmpty();
    } finally {
      run("umount", mount.toString());
    }
  }

  /** Creates empty files until the file system has no inode left. */
  private static void fill(Path dir) {
    for (int i = 0; i < 10_000; i++) {
      try {
        Files.createFile(dir.resolve("filler-" + i));
      } catch (IOException full) {
        return;
      }
    }
    throw new AssertionError("the tmpfs never filled up");
  }

  private static void run(String... command) throws Exception {
    Process process = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes());
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(String.join(" ", command) + ": " + output).isZero();
  }
}
