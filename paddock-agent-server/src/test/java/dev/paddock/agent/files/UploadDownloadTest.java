package dev.paddock.agent.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.paddock.agent.AgentFixture;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class UploadDownloadTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  static String q(Path path) {
    return q(path.toString());
  }

  static String q(String path) {
    return URLEncoder.encode(path, StandardCharsets.UTF_8);
  }

  private HttpResponse<String> upload(String rawPath, BodyPublisher body)
      throws IOException, InterruptedException {
    return agent.send(
        agent
            .request("/api/file/upload?path=" + q(rawPath))
            .header("Content-Type", Multipart.CONTENT_TYPE)
            .POST(body)
            .build());
  }

  private HttpResponse<byte[]> download(String rawPath) throws IOException, InterruptedException {
    return agent
        .client()
        .send(
            agent.request("/api/file/download?path=" + q(rawPath)).GET().build(),
            HttpResponse.BodyHandlers.ofByteArray());
  }

  private static byte[] allByteValues() {
    byte[] bytes = new byte[256 * 3];
    for (int i = 0; i < bytes.length; i++) {
      bytes[i] = (byte) i;
    }
    return bytes;
  }

  @Test
  void binaryUploadRoundTripsThroughDownload() throws Exception {
    Path target = agent.workspace().resolve("bin/all-bytes.dat");
    byte[] bytes = allByteValues();

    HttpResponse<String> uploaded = upload(target.toString(), Multipart.of(bytes));
    assertThat(uploaded.statusCode()).as(uploaded.body()).isEqualTo(200);
    assertThat(AgentFixture.json(uploaded)).containsEntry("success", true);
    assertThat(Files.readAllBytes(target)).isEqualTo(bytes);

    HttpResponse<byte[]> downloaded = download(target.toString());
    assertThat(downloaded.statusCode()).isEqualTo(200);
    assertThat(downloaded.body()).isEqualTo(bytes);
    assertThat(downloaded.headers().firstValue("Content-Type"))
        .hasValue("application/octet-stream");
    assertThat(downloaded.headers().firstValueAsLong("Content-Length")).hasValue(bytes.length);
    assertThat(downloaded.headers().firstValue("Content-Disposition"))
        .hasValue("attachment; filename=\"all-bytes.dat\"");
  }

  @Test
  void anUploadShorterThanItsContentLengthIsRefusedAndNotCommitted() throws Exception {
    Path target = agent.workspace().resolve("truncated.txt");
    java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
    body.writeBytes(Multipart.partHead("file", "truncated.txt"));
    body.writeBytes("complete-looking content".getBytes(StandardCharsets.UTF_8));
    body.writeBytes(Multipart.closing());
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", agent.server().port())) {
      socket.setSoTimeout(10_000);
      String head =
          "POST /api/file/upload?path="
              + q(target)
              + " HTTP/1.1\r\nHost: x\r\nX-Session-API-Key: "
              + AgentFixture.KEY
              + "\r\nContent-Type: "
              + Multipart.CONTENT_TYPE
              + "\r\nContent-Length: 2147483648\r\n\r\n";
      socket.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
      socket.getOutputStream().write(body.toByteArray());
      socket.shutdownOutput(); // D12: the client stops long before its declared length
      String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(answer).startsWith("HTTP/1.1 400").contains("\"detail\"").contains("ended after");
    }
    assertThat(target).doesNotExist();
    try (var left = Files.list(agent.workspace())) {
      assertThat(left).as("no staging file left behind").isEmpty();
    }
  }

  @Test
  void uploadOverwritesAndKeepsNoStagingFiles() throws Exception {
    Path target = agent.workspace().resolve("notes.txt");
    Files.writeString(target, "an old and much longer content");
    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-x---"));

    HttpResponse<String> uploaded =
        upload(target.toString(), Multipart.of("new".getBytes(StandardCharsets.UTF_8)));

    assertThat(uploaded.statusCode()).as(uploaded.body()).isEqualTo(200);
    assertThat(Files.readString(target)).isEqualTo("new");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target)))
        .isEqualTo("rwxr-x---");
    try (var listing = Files.list(agent.workspace())) {
      assertThat(listing).containsExactly(target);
    }
  }

  @Test
  void uploadCreatesMissingParents() throws Exception {
    Path target = agent.workspace().resolve("a/b/c/d.txt");

    HttpResponse<String> uploaded = upload(target.toString(), Multipart.of(new byte[] {1, 2}));

    assertThat(uploaded.statusCode()).as(uploaded.body()).isEqualTo(200);
    assertThat(Files.readAllBytes(target)).containsExactly(1, 2);
  }

  @Test
  void specialCharactersInNamesSurviveBothWays() throws Exception {
    Path target = agent.workspace().resolve("dir with spaces/naïve \"quote\" #1 ?&=+%.txt");

    HttpResponse<String> uploaded = upload(target.toString(), Multipart.of(new byte[] {42}));
    assertThat(uploaded.statusCode()).as(uploaded.body()).isEqualTo(200);
    assertThat(Files.readAllBytes(target)).containsExactly(42);

    HttpResponse<byte[]> downloaded = download(target.toString());
    assertThat(downloaded.body()).containsExactly(42);
    assertThat(downloaded.headers().firstValue("Content-Disposition"))
        .hasValue(
            "attachment; filename=\"na_ve _quote_ #1 ?&=+%.txt\";"
                + " filename*=UTF-8''na%C3%AFve%20%22quote%22%20#1%20%3F&%3D+%25.txt");
  }

  @Test
  void emptyFileDownloadsWithZeroLength() throws Exception {
    Path empty = Files.createFile(agent.workspace().resolve("empty"));

    HttpResponse<byte[]> downloaded = download(empty.toString());

    assertThat(downloaded.statusCode()).isEqualTo(200);
    assertThat(downloaded.body()).isEmpty();
    assertThat(downloaded.headers().firstValueAsLong("Content-Length")).hasValue(0);
  }

  @Test
  void largeFilesStreamBothWaysWithoutBeingHeld() throws Exception {
    long size = 256L << 20;
    long seed = 7;
    Path target = agent.workspace().resolve("large.bin");

    HttpResponse<String> uploaded =
        upload(target.toString(), Multipart.sized(() -> new GeneratedStream(size, seed), size));
    assertThat(uploaded.statusCode()).as(uploaded.body()).isEqualTo(200);
    assertThat(Files.size(target)).isEqualTo(size);

    HttpResponse<InputStream> downloaded =
        agent
            .client()
            .send(
                agent.request("/api/file/download?path=" + q(target)).GET().build(),
                HttpResponse.BodyHandlers.ofInputStream());
    assertThat(downloaded.headers().firstValueAsLong("Content-Length")).hasValue(size);
    assertThat(checksum(downloaded.body())).isEqualTo(GeneratedStream.checksum(size, seed));
  }

  @Test
  void chunkedUploadWithoutContentLengthIsAccepted() throws Exception {
    long size = (3L << 20) + 17;
    Path target = agent.workspace().resolve("chunked.bin");

    HttpResponse<String> uploaded =
        upload(target.toString(), Multipart.chunked(() -> new GeneratedStream(size, 3)));

    assertThat(uploaded.statusCode()).as(uploaded.body()).isEqualTo(200);
    assertThat(checksum(Files.newInputStream(target))).isEqualTo(GeneratedStream.checksum(size, 3));
  }

  private static long checksum(InputStream in) throws IOException {
    CRC32C crc = new CRC32C();
    try (in) {
      byte[] buffer = new byte[64 * 1024];
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        crc.update(buffer, 0, n);
      }
    }
    return crc.getValue();
  }

  @Test
  void uploadRejectsBadRequestsWithoutWriting() throws Exception {
    Path ws = agent.workspace();
    Files.createDirectories(ws.resolve("existing-dir"));
    Files.writeString(ws.resolve("plain-file"), "x");
    byte[] one = {1};

    assertStatus(upload("relative/path.txt", Multipart.of(one)), 400, "absolute");
    assertStatus(
        upload(ws.resolve("existing-dir").toString(), Multipart.of(one)), 400, "directory");
    assertStatus(
        upload(ws.resolve("plain-file/child").toString(), Multipart.of(one)),
        400,
        "not a directory");
    assertStatus(
        agent.send(
            agent
                .request("/api/file/upload")
                .header("Content-Type", Multipart.CONTENT_TYPE)
                .POST(Multipart.of(one))
                .build()),
        422,
        "'path'");
    assertStatus(upload(ws.resolve("u1").toString(), otherFieldOnly()), 422, "'file'");
    assertStatus(
        agent.send(
            agent
                .request("/api/file/upload?path=" + q(ws.resolve("u2")))
                .header("Content-Type", "application/octet-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(one))
                .build()),
        422,
        "multipart");
    assertStatus(upload(ws.resolve("u3").toString(), unterminated()), 400, "malformed multipart");
    assertStatus(
        agent.send(
            agent
                .request("/api/file/upload?path=" + q(ws.resolve("u4")))
                .header("Content-Type", "multipart/form-data")
                .POST(Multipart.of(one))
                .build()),
        400,
        "boundary");

    try (var listing = Files.list(ws)) {
      assertThat(listing.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder("existing-dir", "plain-file");
    }
  }

  private static BodyPublisher otherFieldOnly() {
    byte[] head = Multipart.partHead("note", "n.txt");
    byte[] tail = Multipart.closing();
    byte[] body = new byte[head.length + 1 + tail.length];
    System.arraycopy(head, 0, body, 0, head.length);
    body[head.length] = 'x';
    System.arraycopy(tail, 0, body, head.length + 1, tail.length);
    return HttpRequest.BodyPublishers.ofByteArray(body);
  }

  private static BodyPublisher unterminated() {
    return HttpRequest.BodyPublishers.ofInputStream(
        () ->
            new java.io.SequenceInputStream(
                new ByteArrayInputStream(Multipart.partHead("file", "f")),
                new ByteArrayInputStream("content but no closing boundary".getBytes())));
  }

  @Test
  void downloadRejectsBadRequests() throws Exception {
    Path ws = agent.workspace();

    assertStatus(agent.get("/api/file/download?path=" + q("relative.txt")), 400, "absolute");
    assertStatus(agent.get("/api/file/download?path=" + q(ws.toString())), 400, "directory");
    assertStatus(
        agent.get("/api/file/download?path=" + q(ws.resolve("missing.txt").toString())),
        404,
        "does not exist");
    assertStatus(agent.get("/api/file/download"), 422, "'path'");
    assertStatus(agent.get("/api/file/download?path=" + q(ws) + "&nope=1"), 422, "nope");
  }

  @Test
  void unreadableFileIsForbidden() throws Exception {
    assumeThat(System.getProperty("user.name")).as("root can read anything").isNotEqualTo("root");
    Path secret = Files.writeString(agent.workspace().resolve("secret"), "s");
    Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("---------"));

    assertStatus(
        agent.get("/api/file/download?path=" + q(secret.toString())), 403, "permission denied");
  }

  static void assertStatus(HttpResponse<String> response, int status, String detailContains) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat((String) AgentFixture.json(response).get("detail")).contains(detailContains);
  }
}
