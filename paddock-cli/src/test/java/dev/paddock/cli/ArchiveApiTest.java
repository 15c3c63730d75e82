package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.archive.s3.InProcessS3;
import dev.paddock.archive.s3.S3ArchiveConfig;
import dev.paddock.archive.s3.S3ArchiveStores;
import dev.paddock.client.PaddockClient;
import dev.paddock.controlplane.ArchiveSettings;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Workspace archives before delete, end to end: real agents, real sockets, the SQLite store. */
class ArchiveApiTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  private static ArchiveSettings settings(boolean required) {
    ArchiveSettings d = ArchiveSettings.disabled();
    return new ArchiveSettings(true, required, ArchiveSettings.BOTH, d.timeout(), d.prefix());
  }

  @Nested
  class WhenNotRequired {
    @RegisterExtension final ControlPlane plane = ControlPlane.archiving(settings(false));

    @Test
    void deleteLeavesATarThatExtractsAndAPatchThatApplies() throws Exception {
      PaddockClient bob = user(plane, "bob");
      SandboxInfo sandbox = bob.create(Optional.empty(), true, TIMEOUT);
      run(
          bob,
          sandbox,
          "git init -q && printf 'one\\n' > a.txt && git add a.txt"
              + " && git -c user.name=t -c user.email=t@t commit -qm base"
              + " && printf 'two\\n' >> a.txt && printf 'new\\n' > b.txt");

      bob.delete(sandbox.id());

      assertThat(bob.get(sandbox.id())).isEmpty();
      HttpResponse<String> listed =
          plane.send("GET", "/api/v1/archives/" + sandbox.id(), key(bob), null);
      assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
      List<Map<String, Object>> items = items(listed);
      assertThat(items).extracting(i -> i.get("format")).containsExactly("git-delta", "tar.gz");

      Path work = Files.createTempDirectory("paddock-archive-test-");
      try {
        Path tar = download(plane, bob, sandbox.id(), items.get(1), work.resolve("ws.tar.gz"));
        Path patch = download(plane, bob, sandbox.id(), items.get(0), work.resolve("ws.patch"));
        Path extracted = Files.createDirectory(work.resolve("extracted"));
        assertThat(exec(extracted, "tar", "xzf", tar.toString())).isZero();
        try (var dirs = Files.list(extracted)) {
          Path root = dirs.findFirst().orElseThrow();
          assertThat(root.resolve("a.txt")).hasContent("one\ntwo");
          assertThat(root.resolve("b.txt")).hasContent("new");
          assertThat(root.resolve(".git/HEAD")).exists();
        }

        Path base = Files.createDirectory(work.resolve("base"));
        Files.writeString(base.resolve("a.txt"), "one\n");
        assertThat(exec(base, "git", "init", "-q")).isZero();
        assertThat(exec(base, "git", "apply", patch.toString())).isZero();
        assertThat(base.resolve("a.txt")).hasContent("one\ntwo");
        assertThat(base.resolve("b.txt")).hasContent("new");

        Map<String, Object> manifest = manifest(plane, sandbox.id(), items.get(0));
        assertThat(manifest)
            .containsEntry("sandbox_id", sandbox.id())
            .containsEntry("phase", "final")
            .containsEntry("format", "git-delta")
            .containsEntry("byte_count", (int) Files.size(patch))
            .containsEntry("sha256", sha256(patch));
        assertThat((String) manifest.get("base_commit")).matches("[0-9a-f]{40}");
        assertThat(manifest.get("head_commit")).isEqualTo(manifest.get("base_commit"));
        @SuppressWarnings("unchecked")
        Map<String, Object> environment = (Map<String, Object>) manifest.get("environment");
        assertThat(environment).containsKey("os");
        assertThat(environment.get("runtimes")).asString().contains("git=");
        assertThat(manifest(plane, sandbox.id(), items.get(1)))
            .containsEntry("sha256", sha256(tar))
            .containsEntry("base_commit", manifest.get("base_commit"));
      } finally {
        deleteTree(work);
      }
    }

    @Test
    void theCliListsAndDownloadsTheNewestArchive() throws Exception {
      PaddockClient admin =
          PaddockClient.connect(java.net.URI.create(plane.url()), ControlPlane.ADMIN_KEY);
      SandboxInfo sandbox = admin.create(Optional.empty(), true, TIMEOUT);
      run(admin, sandbox, "printf 'kept\\n' > kept.txt");
      admin.delete(sandbox.id());
      String[] conn = {"--url", plane.url(), "--api-key", ControlPlane.ADMIN_KEY};
      Path work = Files.createTempDirectory("paddock-archive-cli-");
      try {
        Path target = work.resolve("newest.tar.gz");
        assertThat(Main.run(concat(new String[] {"archive", "list", sandbox.id()}, conn))).isZero();
        assertThat(
                Main.run(
                    concat(
                        new String[] {"archive", "get", sandbox.id(), "-o", target.toString()},
                        conn)))
            .isZero();
        var newest =
            admin.archives(sandbox.id()).stream()
                .max(java.util.Comparator.comparing(dev.paddock.api.ArchiveInfo::createdAt))
                .orElseThrow();
        assertThat(sha256(target)).isEqualTo(newest.sha256());
        assertThat(Main.run(concat(new String[] {"archive", "get", "no-such-sandbox"}, conn)))
            .isEqualTo(1);
      } finally {
        deleteTree(work);
      }
    }

    @Test
    void archivesAreOwnerScopedAfterTheSandboxIsGone() throws Exception {
      PaddockClient bob = user(plane, "bob");
      PaddockClient eve = user(plane, "eve");
      SandboxInfo sandbox = bob.create(Optional.empty(), true, TIMEOUT);
      run(bob, sandbox, "printf 'x\\n' > x.txt");
      bob.delete(sandbox.id());

      List<Map<String, Object>> items =
          items(plane.send("GET", "/api/v1/archives/" + sandbox.id(), key(bob), null));
      assertThat(items).extracting(i -> i.get("format")).containsExactly("tar.gz");
      String path = "/api/v1/archives/" + sandbox.id() + "/" + items.get(0).get("name");
      assertThat(plane.send("GET", "/api/v1/archives/" + sandbox.id(), key(eve), null).statusCode())
          .isEqualTo(404);
      assertThat(plane.send("GET", path, key(eve), null).statusCode()).isEqualTo(404);
      assertThat(plane.send("GET", path, key(bob), null).statusCode()).isEqualTo(200);
      assertThat(plane.admin("GET", path, null).statusCode()).isEqualTo(200);
    }

    @Test
    void aKilledAgentIsBroughtBackToArchiveItsWorkspaceBeforeTheDelete() throws Exception {
      PaddockClient bob = user(plane, "bob");
      SandboxInfo sandbox = bob.create(Optional.empty(), true, TIMEOUT);
      run(bob, sandbox, "printf 'kept\\n' > kept.txt");
      plane.killAgent(sandbox.id());

      bob.delete(sandbox.id());

      assertThat(bob.get(sandbox.id())).isEmpty();
      HttpResponse<String> listed =
          plane.send("GET", "/api/v1/archives/" + sandbox.id(), key(bob), null);
      assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
      assertThat(items(listed)).extracting(i -> i.get("format")).contains("tar.gz");
    }
  }

  @Nested
  class WhenNotRequiredAndTheStoreRefuses {
    @RegisterExtension
    final ControlPlane plane = ControlPlane.archiving(settings(false), RefusingStore::new);

    @Test
    void aFailedArchiveDoesNotBlockTheDelete() throws Exception {
      PaddockClient bob = user(plane, "bob");
      SandboxInfo sandbox = bob.create(Optional.empty(), true, TIMEOUT);

      bob.delete(sandbox.id());

      assertThat(bob.get(sandbox.id())).isEmpty();
      assertThat(plane.send("GET", "/api/v1/archives/" + sandbox.id(), key(bob), null).statusCode())
          .isEqualTo(404);
    }
  }

  @Nested
  class WhenRequiredAndTheStoreRefuses {
    @RegisterExtension
    final ControlPlane plane = ControlPlane.archiving(settings(true), RefusingStore::new);

    @Test
    void aFailedArchiveBlocksTheDeleteAndKeepsTheSandbox() throws Exception {
      PaddockClient bob = user(plane, "bob");
      SandboxInfo sandbox = bob.create(Optional.empty(), true, TIMEOUT);
      run(bob, sandbox, "printf 'kept\\n' > kept.txt");

      HttpResponse<String> refused =
          plane.send("DELETE", "/api/v1/sandboxes/" + sandbox.id(), key(bob), null);

      assertThat(refused.statusCode()).isEqualTo(503);
      assertThat(refused.body()).contains("archiving its workspace failed", "kept");
      SandboxInfo kept = bob.get(sandbox.id()).orElseThrow();
      assertThat(kept.status()).isEqualTo(dev.paddock.api.SandboxStatus.RUNNING);
      run(bob, kept, "test \"$(cat kept.txt)\" = kept");
    }
  }

  /** An archive store that is down: every write fails, nothing is ever listed. */
  private static final class RefusingStore implements dev.paddock.api.ArchiveStore {
    @Override
    public void put(String key, Path file) throws java.io.IOException {
      throw new java.io.IOException("the archive store is down");
    }

    @Override
    public List<String> list(String prefix) {
      return List.of();
    }

    @Override
    public Optional<java.io.InputStream> open(String key) {
      return Optional.empty();
    }

    @Override
    public Optional<Long> size(String key) {
      return Optional.empty();
    }
  }

  @Nested
  class WithAnInitialSnapshot {
    @RegisterExtension
    final ControlPlane plane =
        ControlPlane.archiving(settings(false).withInitialSnapshot(Duration.ofSeconds(30)));

    @Test
    void aFreshSandboxIsSnapshotInTheBackground() throws Exception {
      PaddockClient bob = user(plane, "bob");
      SandboxInfo sandbox = bob.create(Optional.empty(), true, TIMEOUT);
      assertThat(sandbox.status()).isEqualTo(dev.paddock.api.SandboxStatus.RUNNING);

      List<Map<String, Object>> items =
          Awaitility.await("the initial snapshot")
              .atMost(TIMEOUT)
              .until(
                  () ->
                      items(plane.send("GET", "/api/v1/archives/" + sandbox.id(), key(bob), null)),
                  listed -> !listed.isEmpty());

      assertThat(items).extracting(i -> i.get("format")).containsExactly("tar.gz");
      Map<String, Object> manifest = manifest(plane, sandbox.id(), items.get(0));
      assertThat(manifest).containsEntry("phase", "initial").containsKey("environment");
      run(bob, sandbox, "true"); // still running and answering
    }
  }

  @Nested
  class WithAnInitialSnapshotThatCannotFinish {
    // A deadline of a nanosecond passes before the first request.
    @RegisterExtension
    final ControlPlane plane =
        ControlPlane.archiving(settings(false).withInitialSnapshot(Duration.ofNanos(1)));

    @Test
    void theStartIsUntouchedAndNothingIsStored() throws Exception {
      PaddockClient bob = user(plane, "bob");

      SandboxInfo sandbox = bob.create(Optional.empty(), true, TIMEOUT);

      assertThat(sandbox.status()).isEqualTo(dev.paddock.api.SandboxStatus.RUNNING);
      run(bob, sandbox, "true");
      assertThat(plane.send("GET", "/api/v1/archives/" + sandbox.id(), key(bob), null).statusCode())
          .isEqualTo(404);
    }
  }

  @Nested
  class WithAnS3Store {
    private static InProcessS3 s3;

    @BeforeAll
    static void startS3() throws Exception {
      s3 = InProcessS3.start();
    }

    @AfterAll
    static void stopS3() {
      s3.close();
    }

    @RegisterExtension
    final ControlPlane plane =
        ControlPlane.archiving(
            settings(false),
            () ->
                S3ArchiveStores.create(s3.config().withPartBytes(S3ArchiveConfig.MIN_PART_BYTES)));

    @Test
    void deleteUploadsTheArchiveToS3AndTheRestRouteStreamsItBack() throws Exception {
      PaddockClient bob = user(plane, "bob");
      SandboxInfo sandbox = bob.create(Optional.empty(), true, TIMEOUT);
      // 12 MiB that gzip cannot shrink: the tar.gz goes up in three 5 MiB parts.
      run(bob, sandbox, "head -c 12582912 /dev/urandom > noise.bin && printf 'hi\\n' > hi.txt");

      bob.delete(sandbox.id());

      List<Map<String, Object>> items =
          items(plane.send("GET", "/api/v1/archives/" + sandbox.id(), key(bob), null));
      assertThat(items).extracting(i -> i.get("format")).containsExactly("tar.gz");
      String key = "workspace-archives/" + sandbox.id() + "/" + items.get(0).get("name");
      assertThat(s3.etag(key)).as("a multipart upload's ETag").endsWith("-3\"");
      Path work = Files.createTempDirectory("paddock-archive-s3-");
      try {
        Path tar = download(plane, bob, sandbox.id(), items.get(0), work.resolve("ws.tar.gz"));
        Path extracted = Files.createDirectory(work.resolve("extracted"));
        assertThat(exec(extracted, "tar", "xzf", tar.toString())).isZero();
        try (var dirs = Files.list(extracted)) {
          Path root = dirs.findFirst().orElseThrow();
          assertThat(root.resolve("hi.txt")).hasContent("hi");
          assertThat(root.resolve("noise.bin")).hasSize(12582912);
        }
      } finally {
        deleteTree(work);
        for (String leftover : List.of(key, key + ".manifest.json")) {
          s3.delete(leftover);
        }
      }
      assertThat(s3.objectCount()).isZero();
    }
  }

  // Helpers

  private static final Map<PaddockClient, String> KEYS =
      new java.util.concurrent.ConcurrentHashMap<>();

  private static PaddockClient user(ControlPlane plane, String name) {
    PaddockClient admin = PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY);
    String key = admin.createUser(name, false).apiKey();
    PaddockClient client = PaddockClient.connect(URI.create(plane.url()), key);
    KEYS.put(client, key);
    return client;
  }

  private static Optional<String> key(PaddockClient client) {
    return Optional.of(KEYS.get(client));
  }

  private static void run(PaddockClient client, SandboxInfo sandbox, String command) {
    StringBuilder err = new StringBuilder();
    int exit = client.agent(sandbox).exec(command, 30, out -> {}, err::append);
    assertThat(exit).as(err.toString()).isZero();
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> items(HttpResponse<String> response) {
    Map<String, Object> body =
        (Map<String, Object>)
            dev.paddock.http.Json.parseAny(response.body().getBytes(StandardCharsets.UTF_8));
    return (List<Map<String, Object>>) body.get("items");
  }

  private static Path download(
      ControlPlane plane, PaddockClient client, String id, Map<String, Object> item, Path to)
      throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create(plane.url() + "/api/v1/archives/" + id + "/" + item.get("name")))
            .header("Authorization", "Bearer " + KEYS.get(client))
            .build();
    HttpResponse<Path> response = plane.http.send(request, HttpResponse.BodyHandlers.ofFile(to));
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(Files.size(to)).isEqualTo(((Number) item.get("byte_count")).longValue());
    assertThat(sha256(to)).isEqualTo(item.get("sha256"));
    return to;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> manifest(
      ControlPlane plane, String id, Map<String, Object> item) throws Exception {
    Path file =
        plane
            .dataDir()
            .resolve(
                "archives/workspace-archives/" + id + "/" + item.get("name") + ".manifest.json");
    return (Map<String, Object>) dev.paddock.http.Json.parseAny(Files.readAllBytes(file));
  }

  private static int exec(Path dir, String... command) throws Exception {
    Process process =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    process.getInputStream().transferTo(System.err);
    return process.waitFor(30, TimeUnit.SECONDS) ? process.exitValue() : -1;
  }

  private static String sha256(Path file) throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    try (var in = new java.security.DigestInputStream(Files.newInputStream(file), sha)) {
      in.transferTo(java.io.OutputStream.nullOutputStream());
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  private static void deleteTree(Path root) throws Exception {
    try (var paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private static String[] concat(String[]... parts) {
    return java.util.Arrays.stream(parts).flatMap(java.util.Arrays::stream).toArray(String[]::new);
  }
}
