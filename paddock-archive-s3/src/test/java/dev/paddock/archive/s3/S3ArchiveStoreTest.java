package dev.paddock.archive.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.api.ArchiveStore;
import dev.paddock.controlplane.ArchiveStoreContract;
import dev.paddock.controlplane.ArchiveStores;
import java.net.HttpURLConnection;
import java.net.URI;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The S3 store keeps the archive store contract against a real S3 API server in this JVM (s3proxy,
 * see {@link InProcessS3}), with the smallest part size S3 allows (5 MiB), so the contract's 11 MiB
 * archive goes up in three parts.
 */
class S3ArchiveStoreTest extends ArchiveStoreContract {
  private static InProcessS3 server;

  @BeforeAll
  static void startServer() throws Exception {
    server = InProcessS3.start();
  }

  @AfterAll
  static void stopServer() throws Exception {
    server.close();
  }

  @Override
  protected ArchiveStore newStore() {
    return S3ArchiveStores.create(server.config().withPartBytes(S3ArchiveConfig.MIN_PART_BYTES));
  }

  @AfterEach
  void emptyTheBucket() throws Exception {
    try (ArchiveStore cleaner = server.store()) {
      for (String key : cleaner.list("")) {
        deleteObject(key);
      }
    }
    assertThat(server.objectCount()).isZero();
  }

  // A multipart object's ETag is the MD5 of its parts' MD5s, followed by "-<number of parts>".
  @Override
  protected void assertStoredInParts(String key) throws Exception {
    HttpURLConnection head = signedless(key);
    assertThat(head.getResponseCode()).isEqualTo(403); // anonymous access is refused...
    head.disconnect();
    assertThat(server.etag(key)).endsWith("-3\"");
  }

  @Test
  void theSettingsChooseTheS3Store() throws Exception {
    Map<String, String> settings =
        Map.of(
            ArchiveStores.STORE_SETTING,
            "s3",
            "RUNTIME_FILE_ARCHIVE_S3_BUCKET",
            InProcessS3.BUCKET,
            "RUNTIME_FILE_ARCHIVE_S3_ENDPOINT",
            server.endpoint().toString(),
            "RUNTIME_FILE_ARCHIVE_S3_PATH_STYLE",
            "true",
            "RUNTIME_FILE_ARCHIVE_S3_REGION",
            "eu-west-1",
            "RUNTIME_FILE_ARCHIVE_S3_ACCESS_KEY_ID",
            InProcessS3.ACCESS_KEY_ID,
            "RUNTIME_FILE_ARCHIVE_S3_SECRET_ACCESS_KEY",
            InProcessS3.SECRET_ACCESS_KEY);
    try (ArchiveStore store = ArchiveStores.fromSettings(settings)) {
      assertThat(store.list("")).isEmpty();
      assertThat(store.open("a/none")).isEmpty();
    }
  }

  @Test
  void wrongCredentialsFailWithoutShowingTheSecret() {
    S3ArchiveConfig wrong =
        server
            .config()
            .withCredentials(new S3ArchiveConfig.Credentials("someone", "not-the-secret-4711"));
    try (ArchiveStore store = S3ArchiveStores.create(wrong)) {
      assertThatThrownBy(() -> store.list(""))
          .isInstanceOf(java.io.IOException.class)
          .hasMessageContaining("listing s3://" + InProcessS3.BUCKET)
          .hasMessageNotContaining("not-the-secret-4711");
    }
    assertThat(wrong.toString()).doesNotContain("not-the-secret-4711").contains("someone");
  }

  @Test
  void settingsNameWhatIsMissing() {
    assertThatThrownBy(() -> S3ArchiveConfig.fromSettings(Map.of()))
        .hasMessageContaining("RUNTIME_FILE_ARCHIVE_S3_BUCKET");
    assertThatThrownBy(
            () ->
                S3ArchiveConfig.fromSettings(
                    Map.of(
                        "RUNTIME_FILE_ARCHIVE_S3_BUCKET", "b",
                        "RUNTIME_FILE_ARCHIVE_S3_SECRET_ACCESS_KEY", "s3cr3t")))
        .hasMessageContaining("ACCESS_KEY_ID")
        .hasMessageNotContaining("s3cr3t");
    assertThatThrownBy(
            () ->
                S3ArchiveConfig.fromSettings(
                    Map.of(
                        "RUNTIME_FILE_ARCHIVE_S3_BUCKET", "b",
                        "RUNTIME_FILE_ARCHIVE_S3_PART_SIZE_MB", "1")))
        .hasMessageContaining("at least");
  }

  private static HttpURLConnection signedless(String key) throws Exception {
    HttpURLConnection head =
        (HttpURLConnection)
            URI.create(server.endpoint() + "/" + InProcessS3.BUCKET + "/" + key)
                .toURL()
                .openConnection();
    head.setRequestMethod("HEAD");
    return head;
  }

  private static void deleteObject(String key) {
    server.delete(key);
  }
}
