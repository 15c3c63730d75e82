package dev.paddock.agent.files;

import static dev.paddock.agent.files.UploadDownloadTest.assertStatus;
import static dev.paddock.agent.files.UploadDownloadTest.q;
import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.http.Json;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ArchiveTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  /** One extracted entry: 'd' directory, 'f' file, 'l' link; content or link target. */
  record Entry(char type, String content, int mode) {
    Entry(char type, String content) {
      this(type, content, -1);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Entry e && e.type == type && e.content.equals(content);
    }

    @Override
    public int hashCode() {
      return content.hashCode();
    }
  }

  private Path project;

  @BeforeEach
  void project() throws IOException {
    project = agent.workspace().resolve("proj");
    write("README.md", "hello");
    write("src/Main.java", "class Main {}");
    write("src/docs", "a file named like a directory pattern");
    write("docs/guide.md", "guide");
    write("build", "a file named build");
    write("sub/build/out.o", "object");
    write("sub/keep/x.log", "log");
    write("node_modules/left-pad/index.js", "module.exports = 1");
    write("cache.pyc", "bytecode");
    write(".git/HEAD", "ref: refs/heads/main");
    write(".git/config", "[remote] url = https://token@host/repo");
    write(".git/FETCH_HEAD", "abc https://token@host/repo");
    write(".git/logs/HEAD", "reflog with https://token@host/repo");
    write(".git/refs/heads/main", "abc");
    write(".git/modules/lib/config", "[remote] url = https://token@host/lib");
    write(".git/modules/lib/HEAD", "ref: refs/heads/main");
    write(".git-credentials", "https://user:token@host");
    write("naïve ünïcode.txt", "unicode");
    write("d".repeat(60) + "/" + "e".repeat(60) + "/" + "f".repeat(60) + ".txt", "long name");
    Files.createDirectories(project.resolve("empty"));
    Files.createSymbolicLink(project.resolve("link"), Path.of("src/Main.java"));
    Files.createSymbolicLink(project.resolve("dangling"), Path.of("/nowhere/at/all"));
  }

  private void write(String relative, String content) throws IOException {
    Path file = project.resolve(relative);
    Files.createDirectories(file.getParent());
    Files.writeString(file, content);
  }

  private HttpResponse<InputStream> archive(String query) throws Exception {
    return agent
        .client()
        .send(
            agent
                .request("/api/file/archive?format=tar.gz&path=" + q(project) + query)
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofInputStream());
  }

  private Map<String, Entry> extract(String query) throws Exception {
    HttpResponse<InputStream> response = archive(query);
    assertThat(response.statusCode()).isEqualTo(200);
    return extract(response.body());
  }

  static Map<String, Entry> extract(InputStream gzip) throws IOException {
    Map<String, Entry> entries = new LinkedHashMap<>();
    try (TarArchiveInputStream tar = new TarArchiveInputStream(new GZIPInputStream(gzip))) {
      for (TarArchiveEntry e = tar.getNextEntry(); e != null; e = tar.getNextEntry()) {
        Entry previous =
            entries.put(
                e.getName(),
                e.isDirectory()
                    ? new Entry('d', "", e.getMode() & 07777)
                    : e.isSymbolicLink()
                        ? new Entry('l', e.getLinkName(), 0777)
                        : new Entry(
                            'f',
                            new String(tar.readAllBytes(), StandardCharsets.UTF_8),
                            e.getMode() & 07777));
        assertThat(previous).as("duplicate entry " + e.getName()).isNull();
      }
    }
    return entries;
  }

  @Test
  void tarGzKeepsContentEmptyDirectoriesAndLinks() throws Exception {
    HttpResponse<InputStream> response = archive("");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/gzip");
    assertThat(response.headers().firstValue("X-Archive-Format")).hasValue("tar.gz");
    assertThat(response.headers().firstValue("Content-Disposition"))
        .hasValue("attachment; filename=\"proj.tar.gz\"");
    Map<String, Entry> entries = extract(response.body());

    assertThat(entries)
        .containsEntry("proj/README.md", new Entry('f', "hello"))
        .containsEntry("proj/src/Main.java", new Entry('f', "class Main {}"))
        .containsEntry("proj/empty/", new Entry('d', ""))
        .containsEntry("proj/link", new Entry('l', "src/Main.java"))
        .containsEntry("proj/dangling", new Entry('l', "/nowhere/at/all"))
        .containsEntry("proj/build", new Entry('f', "a file named build"))
        .containsEntry("proj/naïve ünïcode.txt", new Entry('f', "unicode"))
        .containsEntry(
            "proj/" + "d".repeat(60) + "/" + "e".repeat(60) + "/" + "f".repeat(60) + ".txt",
            new Entry('f', "long name"))
        .containsKeys("proj/", "proj/sub/", "proj/sub/keep/x.log")
        .doesNotContainKeys(
            "proj/sub/build/",
            "proj/sub/build/out.o",
            "proj/node_modules/",
            "proj/cache.pyc",
            "proj/.git/",
            "proj/.git/HEAD",
            "proj/.git-credentials");
    int readmeMode =
        TarEntryWriter.permissionBits(Files.getPosixFilePermissions(project.resolve("README.md")));
    assertThat(entries.get("proj/README.md").mode()).isEqualTo(readmeMode);
    assertThat(List.copyOf(entries.keySet())).first().isEqualTo("proj/");
    assertThat(List.copyOf(entries.keySet())).last().isEqualTo("proj/archive_manifest.json");
  }

  @Test
  void withoutDefaultExcludesEverythingButCredentialsIsKept() throws Exception {
    Map<String, Entry> entries = extract("&use_default_excludes=false");

    assertThat(entries)
        .containsKeys(
            "proj/node_modules/left-pad/index.js",
            "proj/sub/build/out.o",
            "proj/cache.pyc",
            "proj/.git/HEAD",
            "proj/.git/refs/heads/main",
            "proj/.git/modules/lib/HEAD")
        .doesNotContainKeys(
            "proj/.git/config",
            "proj/.git/FETCH_HEAD",
            "proj/.git/logs/",
            "proj/.git/logs/HEAD",
            "proj/.git/modules/lib/config",
            "proj/.git-credentials");
    assertThat(entries.values()).noneMatch(e -> e.content().contains("token"));
  }

  @Test
  void extraExcludesFollowGitignoreRules() throws Exception {
    Map<String, Entry> entries =
        extract("&exclude=docs/&exclude=" + q("sub/keep") + "&exclude=" + q("*.md") + "&exclude=");

    assertThat(entries)
        .containsKeys("proj/src/docs", "proj/sub/")
        .doesNotContainKeys(
            "proj/docs/",
            "proj/docs/guide.md",
            "proj/README.md",
            "proj/sub/keep/",
            "proj/sub/keep/x.log");
  }

  @Test
  void manifestDescribesTheArchive() throws Exception {
    Map<String, Entry> entries = extract("&exclude=*.md");

    Map<String, Object> manifest =
        Json.parseObject(
            entries.get("proj/archive_manifest.json").content().getBytes(StandardCharsets.UTF_8));
    long files = entries.values().stream().filter(e -> e.type() == 'f').count() - 1;
    long bytes =
        entries.entrySet().stream()
            .filter(
                e -> e.getValue().type() == 'f' && !e.getKey().endsWith("archive_manifest.json"))
            .mapToLong(e -> e.getValue().content().getBytes(StandardCharsets.UTF_8).length)
            .sum();
    List<String> excludes = new java.util.ArrayList<>(Excludes.DEFAULTS);
    excludes.add("*.md");
    assertThat(manifest)
        .containsEntry("format", "tar.gz")
        .containsEntry("source", project.toString())
        .containsEntry("file_count", (int) files)
        .containsEntry("total_bytes", (int) bytes)
        .containsEntry("excludes", excludes);
  }

  @Test
  void aUsersOwnManifestIsKept() throws Exception {
    write("archive_manifest.json", "{\"mine\":true}");

    Map<String, Entry> entries = extract("");

    assertThat(entries.get("proj/archive_manifest.json").content()).isEqualTo("{\"mine\":true}");
  }

  @Test
  void withoutAPathTheWorkspaceIsArchived() throws Exception {
    Files.writeString(agent.workspace().resolve("in-workspace.txt"), "here");
    var response =
        agent
            .client()
            .send(
                agent.request("/api/file/archive?format=tar.gz").GET().build(),
                java.net.http.HttpResponse.BodyHandlers.ofByteArray());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(new String(gunzip(response.body()), java.nio.charset.StandardCharsets.ISO_8859_1))
        .contains("in-workspace.txt");
  }

  private static byte[] gunzip(byte[] gz) throws java.io.IOException {
    try (var in = new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(gz))) {
      return in.readAllBytes();
    }
  }

  @Test
  void rejectsBadRequests() throws Exception {
    String tarGz = "/api/file/archive?format=tar.gz&path=";

    assertStatus(agent.get(tarGz + q("relative/dir")), 400, "absolute");
    assertStatus(agent.get(tarGz + q(project.resolve("missing"))), 404, "does not exist");
    assertStatus(agent.get(tarGz + q(project.resolve("README.md"))), 400, "not a directory");
    assertStatus(agent.get("/api/file/archive?format=zip&path=" + q(project)), 422, "format");
    assertStatus(
        agent.get(tarGz + q(project) + "&use_default_excludes=maybe"), 422, "true or false");
    assertStatus(
        agent.get("/api/file/archive?format=git-delta&base_ref=--output=x&path=" + q(project)),
        400,
        "base_ref");
  }
}
