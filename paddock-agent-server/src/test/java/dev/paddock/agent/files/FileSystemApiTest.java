package dev.paddock.agent.files;

import static dev.paddock.agent.files.UploadDownloadTest.assertStatus;
import static dev.paddock.agent.files.UploadDownloadTest.q;
import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The file-system routes (list, stat, mkdir, move, copy, delete, chmod, upload mode, tar upload and
 * download) over a real socket, confined to the workspace, with links inside and out of it.
 */
class FileSystemApiTest {
  @RegisterExtension
  final AgentFixture agent = new AgentFixture(b -> b.fileRoots(List.of(b.build().workspace())));

  private Path ws;
  private Path outside;

  @BeforeEach
  void layout() throws Exception {
    ws = agent.workspace();
    outside = Files.createDirectories(agent.scratch().resolve("outside"));
    Files.writeString(outside.resolve("secret.txt"), "top secret");
    Files.createDirectories(ws.resolve("src/pkg"));
    Files.writeString(ws.resolve("src/a.txt"), "alpha");
    Files.writeString(ws.resolve("src/pkg/b.py"), "print(1)");
    Files.writeString(ws.resolve(".hidden"), "h");
    Files.createSymbolicLink(ws.resolve("src/link-in"), Path.of("pkg/b.py"));
    Files.createSymbolicLink(ws.resolve("escape"), outside);
    Files.createSymbolicLink(ws.resolve("escape-rel"), ws.relativize(outside));
  }

  private HttpResponse<String> post(String route, String json) throws Exception {
    return agent.postJson("/api/file/" + route, json);
  }

  private static String body(Object... pairs) {
    StringBuilder json = new StringBuilder("{");
    for (int i = 0; i < pairs.length; i += 2) {
      json.append(i == 0 ? "" : ",").append(AgentFixture.quote((String) pairs[i])).append(':');
      Object v = pairs[i + 1];
      json.append(v instanceof String s ? AgentFixture.quote(s) : String.valueOf(v));
    }
    return json.append('}').toString();
  }

  @SuppressWarnings("unchecked")
  private List<Map<String, Object>> entries(String query) throws Exception {
    HttpResponse<String> response = agent.get("/api/file/list?" + query);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return (List<Map<String, Object>>) AgentFixture.json(response).get("entries");
  }

  @Test
  void listShowsTypesModesAndLinkTargetsAndHonoursDepthHiddenAndLimit() throws Exception {
    Files.setPosixFilePermissions(
        ws.resolve("src/a.txt"), PosixFilePermissions.fromString("rw-r-----"));

    List<Map<String, Object>> src = entries("path=" + q(ws.resolve("src")));
    assertThat(src).extracting(e -> e.get("name")).containsExactly("a.txt", "link-in", "pkg");
    assertThat(src.get(0))
        .containsEntry("type", "file")
        .containsEntry("size", 5)
        .containsEntry("mode", "0640")
        .containsEntry("path", ws.resolve("src/a.txt").toString())
        .containsEntry("link_target", null)
        .containsKey("mtime");
    assertThat(src.get(1))
        .containsEntry("type", "symlink")
        .containsEntry("link_target", "pkg/b.py");
    assertThat(src.get(2)).containsEntry("type", "dir");

    assertThat(entries("path=" + q(ws) + "&depth=3"))
        .extracting(e -> e.get("path"))
        .contains(ws.resolve("src/pkg/b.py").toString(), ws.resolve(".hidden").toString());
    assertThat(entries("path=" + q(ws) + "&include_hidden=false"))
        .extracting(e -> e.get("name"))
        .doesNotContain(".hidden");
    HttpResponse<String> limited = agent.get("/api/file/list?path=" + q(ws) + "&depth=3&limit=2");
    assertThat(AgentFixture.json(limited)).containsEntry("truncated", true);
    assertThat((List<?>) AgentFixture.json(limited).get("entries")).hasSize(2);
    assertStatus(agent.get("/api/file/list?path=" + q(ws) + "&depth=99"), 422, "depth");
  }

  @Test
  void listCanHonourNestedGitignoreFiles() throws Exception {
    Files.writeString(ws.resolve(".gitignore"), "# build output\n*.log\nbuild/\n");
    Files.writeString(ws.resolve("src/.gitignore"), "pkg/\n");
    Files.createDirectories(ws.resolve("build"));
    Files.createDirectories(ws.resolve(".git"));
    Files.writeString(ws.resolve("src/run.log"), "x");

    List<Map<String, Object>> listed = entries("path=" + q(ws) + "&depth=5&gitignore=true");

    assertThat(listed)
        .extracting(e -> e.get("path"))
        .contains(ws.resolve("src/a.txt").toString())
        .doesNotContain(
            ws.resolve("build").toString(),
            ws.resolve(".git").toString(),
            ws.resolve("src/run.log").toString(),
            ws.resolve("src/pkg").toString(),
            ws.resolve("src/pkg/b.py").toString());
  }

  @Test
  void statFollowsLinksInsideOnlyWhenAsked() throws Exception {
    Map<String, Object> followed =
        AgentFixture.json(agent.get("/api/file/stat?path=" + q(ws.resolve("src/link-in"))));
    Map<String, Object> itself =
        AgentFixture.json(
            agent.get(
                "/api/file/stat?path=" + q(ws.resolve("src/link-in")) + "&follow_links=false"));

    assertThat(followed)
        .containsEntry("type", "file")
        .containsEntry("path", ws.resolve("src/pkg/b.py").toString());
    assertThat(itself).containsEntry("type", "symlink").containsEntry("link_target", "pkg/b.py");
    assertStatus(agent.get("/api/file/stat?path=" + q(ws.resolve("nope"))), 404, "does not exist");
  }

  @Test
  void linksAndDotDotOutOfTheRootAreRefusedEverywhere() throws Exception {
    for (String escape : List.of("escape", "escape-rel")) {
      Path through = ws.resolve(escape);
      assertStatus(
          agent.get("/api/file/download?path=" + q(through.resolve("secret.txt"))),
          403,
          "outside the allowed roots");
      assertStatus(agent.get("/api/file/list?path=" + q(through)), 403, "outside");
      assertStatus(agent.get("/api/file/stat?path=" + q(through)), 403, "outside");
      assertStatus(
          post("copy", body("source", through + "/secret.txt", "destination", ws + "/stolen")),
          403,
          "outside");
      assertStatus(
          post("move", body("source", ws + "/src/a.txt", "destination", through + "/a.txt")),
          403,
          "outside");
      assertStatus(post("chmod", body("path", through.toString(), "mode", "0777")), 403, "outside");
      assertStatus(agent.get("/api/file/download_tar?path=" + q(through)), 403, "outside");
    }
    assertStatus(
        agent.get("/api/file/download?path=" + q(ws + "/../scratch/outside/secret.txt")),
        403,
        "outside");
    // The link itself is inside: it can be examined and deleted, never followed.
    assertThat(
            AgentFixture.json(
                agent.get(
                    "/api/file/stat?path=" + q(ws.resolve("escape")) + "&follow_links=false")))
        .containsEntry("type", "symlink");
    assertThat(post("delete", body("path", ws.resolve("escape").toString())).statusCode())
        .isEqualTo(200);
    assertThat(ws.resolve("escape")).doesNotExist();
    try (Stream<Path> left = Files.list(outside)) {
      assertThat(left).containsExactly(outside.resolve("secret.txt"));
    }
    assertThat(outside.resolve("secret.txt")).hasContent("top secret");
  }

  @Test
  void d10AndD16BadPathsAreShort400s() throws Exception {
    HttpResponse<String> nul = agent.get("/api/file/download?path=" + q(ws + "/a\0b"));
    assertStatus(nul, 400, "NUL");
    // A request line this long is the HTTP layer's 414, before any route; below its limit the
    // route's own 400 applies and neither echoes the path whole.
    HttpResponse<String> huge = agent.get("/api/file/download?path=/" + "a".repeat(100_000));
    assertStatus(huge, 414, "request line");
    assertThat(huge.body()).hasSizeLessThan(300);
    HttpResponse<String> long5k = agent.get("/api/file/download?path=/" + "a".repeat(5_000));
    assertStatus(long5k, 400, "at most 4096");
    assertThat(long5k.body()).hasSizeLessThan(300);
    assertStatus(
        agent.get("/api/file/download?path=" + q(ws + "/src/a.txt/")), 400, "ends with '/'");
    assertStatus(agent.get("/api/file/stat?path=" + q(ws + "/src/a.txt/")), 400, "not a directory");
    assertStatus(agent.get("/api/file/list?path=" + q(ws + "/src/a.txt")), 400, "not a directory");
  }

  @Test
  void mkdirCreatesParentsWithModeAndReportsConflicts() throws Exception {
    Path dir = ws.resolve("x/y/z");
    HttpResponse<String> made =
        post("create_directory", body("path", dir.toString(), "mode", "0750"));
    assertThat(made.statusCode()).as(made.body()).isEqualTo(200);
    assertThat(AgentFixture.json(made)).containsEntry("created", true);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)))
        .isEqualTo("rwxr-x---");
    assertThat(AgentFixture.json(post("create_directory", body("path", dir.toString()))))
        .containsEntry("created", false);

    assertStatus(
        post("create_directory", body("path", dir.toString(), "parents", false)),
        409,
        "already exists");
    assertStatus(
        post("create_directory", body("path", ws + "/q/r", "parents", false)),
        404,
        "does not exist");
    assertStatus(
        post("create_directory", body("path", dir.toString(), "mode", "4755")), 422, "octal");
  }

  @Test
  void moveRenamesAndRefusesToOverwriteUnlessAsked() throws Exception {
    Files.writeString(ws.resolve("target.txt"), "old");

    assertStatus(
        post("move", body("source", ws + "/src/a.txt", "destination", ws + "/target.txt")),
        409,
        "overwrite");
    HttpResponse<String> moved =
        post(
            "move",
            body(
                "source", ws + "/src/a.txt", "destination", ws + "/target.txt", "overwrite", true));
    assertThat(moved.statusCode()).as(moved.body()).isEqualTo(200);
    assertThat(ws.resolve("target.txt")).hasContent("alpha");
    assertThat(ws.resolve("src/a.txt")).doesNotExist();

    assertStatus(
        post("move", body("source", ws + "/missing", "destination", ws + "/m2")),
        404,
        "does not exist");
    assertStatus(
        post("move", body("source", ws + "/src", "destination", ws + "/src/pkg/inner")),
        400,
        "into itself");
    assertStatus(
        post("move", body("source", ws.toString(), "destination", ws + "/../elsewhere")),
        403,
        "root");
    // A link is moved as a link.
    assertThat(
            post("move", body("source", ws + "/src/link-in", "destination", ws + "/src/pkg/link2"))
                .statusCode())
        .isEqualTo(200);
    assertThat(Files.isSymbolicLink(ws.resolve("src/pkg/link2"))).isTrue();
  }

  @Test
  void copyCopiesTreesWithModesAndLinksAsLinks() throws Exception {
    Files.setPosixFilePermissions(
        ws.resolve("src/pkg/b.py"), PosixFilePermissions.fromString("rwxr-x---"));

    HttpResponse<String> copied =
        post("copy", body("source", ws + "/src", "destination", ws + "/copy"));

    assertThat(copied.statusCode()).as(copied.body()).isEqualTo(200);
    assertThat(AgentFixture.json(copied)).containsEntry("copied", 5);
    assertThat(ws.resolve("copy/pkg/b.py")).hasContent("print(1)");
    assertThat(
            PosixFilePermissions.toString(
                Files.getPosixFilePermissions(ws.resolve("copy/pkg/b.py"))))
        .isEqualTo("rwxr-x---");
    assertThat(Files.readSymbolicLink(ws.resolve("copy/link-in"))).isEqualTo(Path.of("pkg/b.py"));
    assertStatus(
        post("copy", body("source", ws + "/src/a.txt", "destination", ws + "/copy/a.txt")),
        409,
        "overwrite");
    assertStatus(
        post("copy", body("source", ws + "/src", "destination", ws + "/src/pkg/again")),
        400,
        "into itself");
    Files.writeString(ws.resolve("src/a.txt"), "changed");
    assertThat(
            post(
                    "copy",
                    body(
                        "source",
                        ws + "/src/a.txt",
                        "destination",
                        ws + "/copy/a.txt",
                        "overwrite",
                        true))
                .statusCode())
        .isEqualTo(200);
    assertThat(ws.resolve("copy/a.txt")).hasContent("changed");
  }

  @Test
  void deleteNeedsRecursiveForADirectoryAndNeverFollowsLinks() throws Exception {
    Files.createSymbolicLink(ws.resolve("src/pkg/out"), outside);

    assertStatus(post("delete", body("path", ws + "/src")), 409, "recursive=true");
    HttpResponse<String> deleted = post("delete", body("path", ws + "/src", "recursive", true));

    assertThat(deleted.statusCode()).as(deleted.body()).isEqualTo(200);
    assertThat(ws.resolve("src")).doesNotExist();
    assertThat(outside.resolve("secret.txt")).hasContent("top secret");
    assertStatus(post("delete", body("path", ws + "/src")), 404, "does not exist");
    assertStatus(
        post("delete", body("path", ws.toString(), "recursive", true)), 403, "allowed root");
  }

  @Test
  void chmodSetsModesRecursivelyWithoutTouchingLinkTargets() throws Exception {
    Files.createSymbolicLink(ws.resolve("src/pkg/out"), outside.resolve("secret.txt"));
    String before =
        PosixFilePermissions.toString(Files.getPosixFilePermissions(outside.resolve("secret.txt")));

    HttpResponse<String> changed =
        post("chmod", body("path", ws + "/src", "mode", "0700", "recursive", true));

    assertThat(changed.statusCode()).as(changed.body()).isEqualTo(200);
    assertThat(
            PosixFilePermissions.toString(
                Files.getPosixFilePermissions(ws.resolve("src/pkg/b.py"))))
        .isEqualTo("rwx------");
    assertThat(
            PosixFilePermissions.toString(
                Files.getPosixFilePermissions(outside.resolve("secret.txt"))))
        .isEqualTo(before);
    assertStatus(post("chmod", body("path", ws + "/src", "mode", "999")), 422, "octal");
  }

  @Test
  void uploadTakesAModeFromTheQueryOrAField() throws Exception {
    HttpResponse<String> viaQuery =
        agent.send(
            agent
                .request("/api/file/upload?mode=0751&path=" + q(ws.resolve("run.sh")))
                .header("Content-Type", Multipart.CONTENT_TYPE)
                .POST(Multipart.of("#!/bin/sh\n".getBytes(StandardCharsets.UTF_8)))
                .build());
    assertThat(viaQuery.statusCode()).as(viaQuery.body()).isEqualTo(200);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(ws.resolve("run.sh"))))
        .isEqualTo("rwxr-x--x");

    byte[] withField = multipart("mode", "0600", "file", "secret");
    HttpResponse<String> viaField =
        agent.send(
            agent
                .request("/api/file/upload?path=" + q(ws.resolve("key")))
                .header("Content-Type", Multipart.CONTENT_TYPE)
                .POST(HttpRequest.BodyPublishers.ofByteArray(withField))
                .build());
    assertThat(viaField.statusCode()).as(viaField.body()).isEqualTo(200);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(ws.resolve("key"))))
        .isEqualTo("rw-------");
  }

  private static byte[] multipart(String... fieldsAndValues) {
    StringBuilder body = new StringBuilder();
    for (int i = 0; i < fieldsAndValues.length; i += 2) {
      body.append("--")
          .append(Multipart.BOUNDARY)
          .append("\r\nContent-Disposition: form-data; name=\"")
          .append(fieldsAndValues[i])
          .append("\"\r\n\r\n")
          .append(fieldsAndValues[i + 1])
          .append("\r\n");
    }
    body.append("--").append(Multipart.BOUNDARY).append("--\r\n");
    return body.toString().getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void d12AnUploadBodyShorterThanItsLengthIsNeverCommitted() throws Exception {
    Path target = ws.resolve("truncated.bin");
    byte[] body = multipart("file", "complete-looking content");
    String head =
        "POST /api/file/upload?path="
            + q(target)
            + " HTTP/1.1\r\nHost: x\r\n"
            + "X-Session-API-Key: "
            + AgentFixture.KEY
            + "\r\n"
            + "Content-Type: "
            + Multipart.CONTENT_TYPE
            + "\r\n"
            + "Content-Length: "
            + (body.length + 1000)
            + "\r\n\r\n";
    String reply;
    try (Socket socket = new Socket("127.0.0.1", agent.server().port())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(head.getBytes(StandardCharsets.ISO_8859_1));
      out.write(body);
      out.flush();
      socket.shutdownOutput();
      reply = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    }

    assertThat(reply).doesNotStartWith("HTTP/1.1 200");
    assertThat(target).doesNotExist();
    try (Stream<Path> left = Files.list(ws)) {
      assertThat(left.map(p -> p.getFileName().toString()))
          .noneMatch(n -> n.startsWith(".paddock-upload-"));
    }
  }

  @Test
  void tarRoundTripKeepsModesLinksAndEmptyDirectories() throws Exception {
    Files.setPosixFilePermissions(
        ws.resolve("src/pkg/b.py"), PosixFilePermissions.fromString("rwxr-x---"));
    Files.setPosixFilePermissions(
        ws.resolve("src/pkg"), PosixFilePermissions.fromString("rwx--x---"));
    Files.createDirectories(ws.resolve("src/empty"));

    HttpResponse<byte[]> tar =
        agent
            .client()
            .send(
                agent.request("/api/file/download_tar?path=" + q(ws.resolve("src"))).GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());
    assertThat(tar.statusCode()).isEqualTo(200);
    assertThat(tar.headers().firstValue("Content-Type")).hasValue("application/x-tar");

    HttpResponse<String> extracted = uploadTar(ws.resolve("restored"), tar.body());
    assertThat(extracted.statusCode()).as(extracted.body()).isEqualTo(200);

    Path restored = ws.resolve("restored/src");
    assertThat(restored.resolve("pkg/b.py")).hasContent("print(1)");
    assertThat(
            PosixFilePermissions.toString(
                Files.getPosixFilePermissions(restored.resolve("pkg/b.py"))))
        .isEqualTo("rwxr-x---");
    assertThat(
            PosixFilePermissions.toString(Files.getPosixFilePermissions(restored.resolve("pkg"))))
        .isEqualTo("rwx--x---");
    assertThat(Files.readSymbolicLink(restored.resolve("link-in"))).isEqualTo(Path.of("pkg/b.py"));
    assertThat(restored.resolve("empty")).isEmptyDirectory();
    assertThat(Files.getLastModifiedTime(restored.resolve("a.txt")).toMillis() / 1000)
        .isEqualTo(Files.getLastModifiedTime(ws.resolve("src/a.txt")).toMillis() / 1000);
  }

  @Test
  void tarDownloadStoresLinksOutOfTheRootAsLinksNeverTheirTargets() throws Exception {
    Files.createSymbolicLink(ws.resolve("src/out"), outside.resolve("secret.txt"));

    HttpResponse<byte[]> tar =
        agent
            .client()
            .send(
                agent
                    .request("/api/file/download_tar?path=" + q(ws.resolve("src")) + "&gzip=true")
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.ofByteArray());

    assertThat(new String(tar.body(), StandardCharsets.ISO_8859_1)).doesNotContain("top secret");
    try (TarArchiveInputStream in =
        new TarArchiveInputStream(
            new java.util.zip.GZIPInputStream(new ByteArrayInputStream(tar.body())))) {
      boolean found = false;
      for (TarArchiveEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
        if (e.getName().equals("src/out")) {
          found =
              e.isSymbolicLink()
                  && e.getLinkName().equals(outside.resolve("secret.txt").toString());
        }
      }
      assertThat(found).as("src/out stored as a link").isTrue();
    }
  }

  @Test
  void tarUploadRefusesEscapesAndLinksOutOfTheRoots() throws Exception {
    assertStatus(uploadTar(ws.resolve("t1"), tar(file("../evil.txt", "x"))), 400, "climbs out");
    assertStatus(uploadTar(ws.resolve("t2"), tar(file("/abs.txt", "x"))), 400, "absolute");
    assertStatus(
        uploadTar(ws.resolve("t3"), tar(link("bad", outside.toString()))),
        403,
        "outside the allowed roots");
    assertStatus(
        uploadTar(ws.resolve("t4"), tar(link("bad", "../../scratch/outside"))), 403, "outside");
    // A link inside the target and a file written through it: refused, the link is not followed.
    Files.createDirectories(ws.resolve("t5"));
    Files.createSymbolicLink(ws.resolve("t5/through"), outside);
    assertStatus(
        uploadTar(ws.resolve("t5"), tar(file("through/planted.txt", "x"))), 400, "not a directory");
    assertStatus(
        uploadTar(
            ws.resolve("t6"),
            "not a tar at all, just some bytes that go on"
                .repeat(20)
                .getBytes(StandardCharsets.UTF_8)),
        400,
        "tar");
    assertThat(ws.resolve("evil.txt")).doesNotExist();
    try (Stream<Path> left = Files.list(outside)) {
      assertThat(left).containsExactly(outside.resolve("secret.txt"));
    }
    assertThat(Files.exists(ws.resolve("t3/bad"), LinkOption.NOFOLLOW_LINKS)).isFalse();
  }

  private HttpResponse<String> uploadTar(Path dir, byte[] tar) throws Exception {
    return agent.send(
        agent
            .request("/api/file/upload_tar?path=" + q(dir))
            .header("Content-Type", "application/x-tar")
            .POST(HttpRequest.BodyPublishers.ofByteArray(tar))
            .build());
  }

  private record Entry(String name, String content, String linkTarget) {}

  private static Entry file(String name, String content) {
    return new Entry(name, content, null);
  }

  private static Entry link(String name, String target) {
    return new Entry(name, null, target);
  }

  private static byte[] tar(Entry... entries) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (TarArchiveOutputStream out = new TarArchiveOutputStream(bytes)) {
      for (Entry entry : entries) {
        if (entry.linkTarget() != null) {
          TarArchiveEntry e = new TarArchiveEntry(entry.name(), TarConstants.LF_SYMLINK);
          e.setLinkName(entry.linkTarget());
          out.putArchiveEntry(e);
        } else {
          byte[] content = entry.content().getBytes(StandardCharsets.UTF_8);
          TarArchiveEntry e = new TarArchiveEntry(entry.name(), true);
          e.setSize(content.length);
          out.putArchiveEntry(e);
          out.write(content);
        }
        out.closeArchiveEntry();
      }
    }
    return bytes.toByteArray();
  }
}
