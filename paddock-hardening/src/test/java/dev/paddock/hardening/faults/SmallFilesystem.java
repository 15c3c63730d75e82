package dev.paddock.hardening.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A tmpfs of a few MiB that the test mounts (as root; skipped otherwise) for an archive store to
 * live on: it can be filled so the next write finds no space, and remounted read-only, which root
 * cannot write through either (EROFS). Unmounted after each test, even a failed one, and the test
 * fails if the mount or its directory is left. Register it before the control plane (a lower
 * {@code @Order}): it is then mounted before the store opens and unmounted after it closed.
 */
final class SmallFilesystem implements BeforeEachCallback, AfterEachCallback {
  private static final String SOURCE = "paddock-faults";

  private final int mebibytes;
  private Path mountPoint;
  private boolean mounted;

  SmallFilesystem(int mebibytes) {
    this.mebibytes = mebibytes;
  }

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    Assumptions.assumeTrue(
        "root".equals(System.getProperty("user.name")),
        "mounting a small filesystem needs root; the disk-full and read-only faults are skipped");
    mountPoint = Files.createTempDirectory("paddock-faults-fs-");
    run("mount", "-t", "tmpfs", "-o", "size=" + mebibytes + "m,mode=0700", SOURCE, path());
    mounted = true;
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    if (mountPoint == null) {
      return;
    }
    try {
      if (mounted) {
        run("umount", path());
      }
    } finally {
      Files.deleteIfExists(mountPoint);
    }
    assertThat(mounts()).as("mounts left behind").doesNotContain(" " + path() + " ");
    assertThat(mountPoint).doesNotExist();
  }

  /** The filesystem's root. */
  Path root() {
    return mountPoint;
  }

  /** Writes a ballast file that leaves at most {@code leftBytes} free; {@link #free} removes it. */
  void fill(long leftBytes) throws IOException {
    long free = Files.getFileStore(mountPoint).getUsableSpace();
    byte[] block = new byte[64 << 10];
    try (OutputStream out = Files.newOutputStream(ballast())) {
      for (long left = free - leftBytes; left > 0; left -= block.length) {
        out.write(block, 0, (int) Math.min(block.length, left));
      }
    }
    assertThat(Files.getFileStore(mountPoint).getUsableSpace()).isLessThanOrEqualTo(leftBytes);
  }

  /** Removes the ballast {@link #fill} wrote. */
  void free() throws IOException {
    Files.delete(ballast());
  }

  /** Remounts it read-only: every write fails with EROFS, for root too. */
  void readOnly() throws Exception {
    run("mount", "-o", "remount,ro", path());
  }

  /** Remounts it read-write. */
  void writable() throws Exception {
    run("mount", "-o", "remount,rw", path());
  }

  /** Every regular file under the root but the ballast, relative to it, sorted. */
  List<String> files() throws IOException {
    try (var paths = Files.walk(mountPoint)) {
      return paths
          .filter(Files::isRegularFile)
          .filter(p -> !p.equals(ballast()))
          .map(p -> mountPoint.relativize(p).toString())
          .sorted(Comparator.naturalOrder())
          .toList();
    }
  }

  private Path ballast() {
    return mountPoint.resolve("ballast");
  }

  private String path() {
    return mountPoint.toString();
  }

  private static String mounts() throws IOException {
    return Files.readString(Path.of("/proc/self/mounts"), StandardCharsets.UTF_8);
  }

  private static void run(String... command) throws Exception {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).as(String.join(" ", command)).isTrue();
    assertThat(process.exitValue()).as(String.join(" ", command) + ": " + out).isZero();
  }
}
