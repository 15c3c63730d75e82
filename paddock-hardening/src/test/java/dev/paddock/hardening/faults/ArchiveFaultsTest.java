package dev.paddock.hardening.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.ArchiveInfo;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.archive.s3.InProcessS3;
import dev.paddock.cli.ControlPlane;
import dev.paddock.controlplane.ArchiveSettings;
import dev.paddock.controlplane.ArchiveStores;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The archive store failing under a delete with archiving on: its filesystem full, or read-only.
 * Each failure must be told truthfully and safely (a 503 naming the cause, no store path, no Java
 * class; never a 500), leave nothing in the store that reads as an archive, and — with archiving
 * REQUIRED — keep the sandbox, its files and its key, so the delete succeeds once the store works
 * again and the archive read back is the whole workspace. Not required: logged, the delete goes on.
 */
class ArchiveFaultsTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  // 2 MiB that gzip cannot shrink, on a 4 MiB filesystem with less than 1 MiB left.
  private static final int FS_MIB = 4;
  private static final String MAKE_WORKSPACE =
      "head -c 2097152 /dev/urandom > noise.bin && printf 'kept\\n' > notes.txt"
          + " && sha256sum noise.bin | cut -d' ' -f1";

  private static ArchiveSettings settings(boolean required) {
    ArchiveSettings d = ArchiveSettings.disabled();
    return new ArchiveSettings(true, required, ArchiveSettings.TAR_GZ, d.timeout(), d.prefix());
  }

  @Nested
  class WhenTheDiskIsFull {
    @RegisterExtension
    @Order(1)
    final SmallFilesystem fs = new SmallFilesystem(FS_MIB);

    @RegisterExtension
    @Order(2)
    final ControlPlane plane =
        ControlPlane.archiving(settings(true), () -> ArchiveStores.directory(fs.root()));

    @Test
    void aRequiredArchiveKeepsTheSandboxUntilThereIsSpaceThenArchivesItWhole() throws Exception {
      Users bob = Users.create(plane.url(), ControlPlane.ADMIN_KEY, "bob");
      SandboxInfo sandbox = bob.client().create(Optional.empty(), true, TIMEOUT);
      String noise = bob.run(sandbox, MAKE_WORKSPACE).trim();
      fs.fill(1 << 20);

      HttpResponse<String> refused = delete(bob, sandbox);

      assertRefusedTruthfully(refused, "No space left on device", fs.root());
      assertKept(bob, sandbox, noise);
      assertThat(fs.files()).as("nothing half-written left in the store").isEmpty();

      fs.free();
      HttpResponse<String> deleted = delete(bob, sandbox);

      assertThat(deleted.statusCode()).as(deleted.body()).isEqualTo(200);
      assertThat(bob.client().get(sandbox.id())).isEmpty();
      assertArchivedWhole(bob, sandbox, noise);
    }
  }

  @Nested
  class WhenTheStoreIsReadOnly {
    @RegisterExtension
    @Order(1)
    final SmallFilesystem fs = new SmallFilesystem(FS_MIB);

    @RegisterExtension
    @Order(2)
    final ControlPlane plane =
        ControlPlane.archiving(settings(true), () -> ArchiveStores.directory(fs.root()));

    @Test
    void aRequiredArchiveKeepsTheSandboxUntilTheStoreIsWritableThenArchivesItWhole()
        throws Exception {
      Users bob = Users.create(plane.url(), ControlPlane.ADMIN_KEY, "bob");
      SandboxInfo sandbox = bob.client().create(Optional.empty(), true, TIMEOUT);
      String noise = bob.run(sandbox, MAKE_WORKSPACE).trim();
      fs.readOnly();

      HttpResponse<String> refused = delete(bob, sandbox);

      assertRefusedTruthfully(refused, "Read-only file system", fs.root());
      assertKept(bob, sandbox, noise);

      fs.writable();
      assertThat(fs.files()).as("nothing half-written left in the store").isEmpty();
      HttpResponse<String> deleted = delete(bob, sandbox);

      assertThat(deleted.statusCode()).as(deleted.body()).isEqualTo(200);
      assertArchivedWhole(bob, sandbox, noise);
    }
  }

  @Nested
  class WhenTheStoreIsReadOnlyAndArchivesAreNotRequired {
    @RegisterExtension
    @Order(1)
    final SmallFilesystem fs = new SmallFilesystem(FS_MIB);

    @RegisterExtension
    @Order(2)
    final ControlPlane plane =
        ControlPlane.archiving(settings(false), () -> ArchiveStores.directory(fs.root()));

    @Test
    void theDeleteGoesOnAndNoArchiveIsListed() throws Exception {
      Users bob = Users.create(plane.url(), ControlPlane.ADMIN_KEY, "bob");
      SandboxInfo sandbox = bob.client().create(Optional.empty(), true, TIMEOUT);
      bob.run(sandbox, MAKE_WORKSPACE);
      fs.readOnly();

      HttpResponse<String> deleted = delete(bob, sandbox);

      assertThat(deleted.statusCode()).as(deleted.body()).isEqualTo(200);
      assertThat(bob.client().get(sandbox.id())).isEmpty();
      assertThat(bob.client().archives(sandbox.id())).isEmpty();
      fs.writable();
      assertThat(fs.files()).isEmpty();
    }
  }

  @Nested
  class WhenS3IsUnavailable {
    private static InProcessS3 backAgain;
    private static FailingS3 s3;

    @BeforeAll
    static void startS3() throws Exception {
      backAgain = InProcessS3.start();
      s3 = FailingS3.start(FailingS3.Mode.UNAVAILABLE);
    }

    @AfterAll
    static void stopS3() throws Exception {
      try {
        s3.close();
      } finally {
        backAgain.close();
      }
    }

    @RegisterExtension final ControlPlane plane = ControlPlane.archiving(settings(true), s3::store);

    @Test
    void aRequiredArchiveKeepsTheSandboxAndItsKeyUntilTheStoreIsBackThenArchivesItWhole()
        throws Exception {
      Users bob = Users.create(plane.url(), ControlPlane.ADMIN_KEY, "bob");
      SandboxInfo sandbox = bob.client().create(Optional.empty(), true, TIMEOUT);
      String noise = bob.run(sandbox, MAKE_WORKSPACE).trim();

      HttpResponse<String> refused = delete(bob, sandbox);

      assertThat(s3.requests()).isPositive();
      assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
      assertThat(refused.body())
          .contains("archiving its workspace failed", "s3://" + FailingS3.BUCKET, "503", "kept");
      SandboxInfo kept = bob.client().get(sandbox.id()).orElseThrow();
      assertThat(kept.status()).isEqualTo(SandboxStatus.RUNNING);
      assertThat(kept.sessionApiKey()).isEqualTo(sandbox.sessionApiKey());
      assertThat(bob.run(sandbox, "sha256sum noise.bin | cut -d' ' -f1").trim()).isEqualTo(noise);
      assertStoreDownAnswered(bob, sandbox);
      assertThat(backAgain.objectCount()).as("nothing reached the real store").isZero();

      s3.recover(backAgain.endpoint());
      HttpResponse<String> deleted = delete(bob, sandbox);

      assertThat(deleted.statusCode()).as(deleted.body()).isEqualTo(200);
      assertThat(bob.client().get(sandbox.id())).isEmpty();
      assertArchivedWhole(bob, sandbox, noise);
      assertThat(backAgain.objectCount()).as("the archive and its manifest").isEqualTo(2);
    }
  }

  @Nested
  class WhenS3ResetsConnectionsAndArchivesAreNotRequired {
    private static FailingS3 s3;

    @BeforeAll
    static void startS3() throws Exception {
      s3 = FailingS3.start(FailingS3.Mode.RESET);
    }

    @AfterAll
    static void stopS3() throws Exception {
      s3.close();
    }

    @RegisterExtension
    final ControlPlane plane = ControlPlane.archiving(settings(false), s3::store);

    @Test
    void theDeleteGoesOn() throws Exception {
      Users bob = Users.create(plane.url(), ControlPlane.ADMIN_KEY, "bob");
      SandboxInfo sandbox = bob.client().create(Optional.empty(), true, TIMEOUT);
      bob.run(sandbox, MAKE_WORKSPACE);

      HttpResponse<String> deleted = delete(bob, sandbox);

      assertThat(s3.requests()).isPositive();
      assertThat(deleted.statusCode()).as(deleted.body()).isEqualTo(200);
      assertThat(bob.client().get(sandbox.id())).isEmpty();
      assertStoreDownAnswered(bob, sandbox);
    }
  }

  /** Listing archives while the store is down: a 503 that says so, never a 500. */
  static void assertStoreDownAnswered(Users user, SandboxInfo sandbox) throws Exception {
    HttpResponse<String> listed = user.send("GET", "/api/v1/archives/" + sandbox.id(), TIMEOUT);
    assertThat(listed.statusCode()).as(listed.body()).isEqualTo(503);
    assertThat(listed.body()).contains("\"detail\"", "archive").doesNotContain("Exception");
  }

  static HttpResponse<String> delete(Users user, SandboxInfo sandbox) throws Exception {
    return user.send("DELETE", "/api/v1/sandboxes/" + sandbox.id(), TIMEOUT);
  }

  /** A 503 whose detail names the cause and shows neither the store's path nor a Java class. */
  static void assertRefusedTruthfully(HttpResponse<String> refused, String cause, Path storeRoot) {
    assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
    assertThat(refused.body())
        .contains("\"detail\"", "archiving its workspace failed", cause, "kept")
        .doesNotContain(storeRoot.toString(), "java.", "Exception");
  }

  /** Still RUNNING with the same key, which still runs a command that finds its files. */
  static void assertKept(Users user, SandboxInfo sandbox, String noiseSha256) {
    SandboxInfo kept = user.client().get(sandbox.id()).orElseThrow();
    assertThat(kept.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(kept.sessionApiKey()).isEqualTo(sandbox.sessionApiKey());
    assertThat(user.run(sandbox, "cat notes.txt && sha256sum noise.bin | cut -d' ' -f1"))
        .isEqualTo("kept\n" + noiseSha256 + "\n");
    assertThat(user.client().archives(sandbox.id())).as("no archive listed").isEmpty();
  }

  /** The one archive listed downloads, matches its listed digest and extracts to the workspace. */
  static void assertArchivedWhole(Users user, SandboxInfo sandbox, String noiseSha256)
      throws Exception {
    List<ArchiveInfo> archives = user.client().archives(sandbox.id());
    assertThat(archives).extracting(ArchiveInfo::format).containsExactly("tar.gz");
    Path work = Files.createTempDirectory("paddock-faults-archive-");
    try {
      Path tar = work.resolve("ws.tar.gz");
      user.client().downloadArchive(sandbox.id(), archives.get(0).name(), tar);
      assertThat(Files.size(tar)).isEqualTo(archives.get(0).byteCount());
      assertThat(sha256(tar)).isEqualTo(archives.get(0).sha256());
      Path extracted = Files.createDirectory(work.resolve("x"));
      Process untar =
          new ProcessBuilder("tar", "xzf", tar.toString(), "-C", extracted.toString())
              .redirectErrorStream(true)
              .start();
      untar.getInputStream().transferTo(System.err);
      assertThat(untar.waitFor(30, TimeUnit.SECONDS) && untar.exitValue() == 0).isTrue();
      try (var found = Files.walk(extracted)) {
        List<Path> files = found.filter(Files::isRegularFile).toList();
        Path noise = files.stream().filter(p -> p.endsWith("noise.bin")).findFirst().orElseThrow();
        Path notes = files.stream().filter(p -> p.endsWith("notes.txt")).findFirst().orElseThrow();
        assertThat(sha256(noise)).isEqualTo(noiseSha256);
        assertThat(notes).hasContent("kept");
      }
    } finally {
      try (var paths = Files.walk(work)) {
        for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  static String sha256(Path file) throws Exception {
    return HexFormat.of()
        .formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }
}
