package dev.paddock.agent.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.http.Json;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code POST /api/file/glob} and {@code /api/file/grep} over a real socket. */
class SearchTest {
  @TempDir static Path sandbox;

  @RegisterExtension
  final AgentFixture agent =
      new AgentFixture(b -> b.fileRoots(List.of(sandbox.resolve("allowed"))));

  private Path top;
  private Path outside;

  @BeforeEach
  void tree() throws Exception {
    String run = UUID.randomUUID().toString();
    top = Files.createDirectories(sandbox.resolve("allowed").resolve(run));
    outside = Files.createDirectories(sandbox.resolve("outside").resolve(run));
    write("src/main/App.java", "class App {\n  // TODO: needle one\n}\n");
    write("src/test/test_app.java", "needle in a test\n");
    write("src/test/deep/test_deep.java", "nothing here\n");
    write("README.md", "Read me: NEEDLE upper\n");
    write("build/out.java", "needle in build output\n");
    write("notes.log", "needle in a log\n");
    write(".hidden/secret.txt", "needle hidden\n");
    write(".gitignore", "build/\n*.log\n!keep.log\n");
    write("keep.log", "needle kept by negation\n");
    Files.write(top.resolve("blob.bin"), new byte[] {'n', 'e', 'e', 'd', 'l', 'e', 0, 1});
    Files.writeString(outside.resolve("far.txt"), "needle outside the roots\n");
    Files.createSymbolicLink(top.resolve("escape"), outside);
    Files.createSymbolicLink(top.resolve("far-link.txt"), outside.resolve("far.txt"));
  }

  private void write(String relative, String content) throws Exception {
    Path file = top.resolve(relative);
    Files.createDirectories(file.getParent());
    Files.writeString(file, content);
  }

  private HttpResponse<String> post(String route, Object... fieldsAndValues) throws Exception {
    Map<String, Object> body = new LinkedHashMap<>();
    for (int i = 0; i < fieldsAndValues.length; i += 2) {
      body.put((String) fieldsAndValues[i], fieldsAndValues[i + 1]);
    }
    return agent.postJson(route, Json.string(body));
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> lines(HttpResponse<String> response) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/x-ndjson");
    return response
        .body()
        .lines()
        .map(line -> (Map<String, Object>) Json.parseAny(line.getBytes(StandardCharsets.UTF_8)))
        .toList();
  }

  private static Map<String, Object> summary(List<Map<String, Object>> lines) {
    assertThat(lines).isNotEmpty();
    assertThat(lines.getLast()).containsEntry("type", "summary");
    return lines.getLast();
  }

  private List<String> paths(List<Map<String, Object>> lines) {
    return lines.stream()
        .filter(line -> !"summary".equals(line.get("type")))
        .map(line -> top.relativize(Path.of((String) line.get("path"))).toString())
        .toList();
  }

  @Test
  void globMatchesPathsBelowTheDirectoryInNameOrder() throws Exception {
    List<Map<String, Object>> all =
        lines(post("/api/file/glob", "path", top.toString(), "pattern", "**/*.java"));
    assertThat(paths(all))
        .containsExactly(
            "src/main/App.java", "src/test/deep/test_deep.java", "src/test/test_app.java");
    assertThat(all.getFirst())
        .containsEntry("type", "file")
        .containsEntry("size", 36)
        .containsKey("mtime");
    assertThat(summary(all))
        .containsEntry("matches", 3)
        .containsEntry("truncated", false)
        .containsEntry("timed_out", false);

    List<Map<String, Object>> tests =
        lines(post("/api/file/glob", "path", top.toString(), "pattern", "src/**/test_*.java"));
    assertThat(paths(tests))
        .containsExactly("src/test/deep/test_deep.java", "src/test/test_app.java");
    List<Map<String, Object>> topOnly =
        lines(post("/api/file/glob", "path", top.toString(), "pattern", "*.{md,log}"));
    assertThat(paths(topOnly)).containsExactly("README.md", "keep.log");
  }

  @Test
  void globHonoursGitignoreAndHiddenOnlyWhenAsked() throws Exception {
    List<Map<String, Object>> ignored =
        lines(post("/api/file/glob", "path", top.toString(), "pattern", "**"));
    assertThat(paths(ignored))
        .contains("keep.log", "escape", "far-link.txt")
        .doesNotContain("build", "build/out.java", "notes.log", ".hidden", ".gitignore");

    List<Map<String, Object>> everything =
        lines(
            post(
                "/api/file/glob",
                "path",
                top.toString(),
                "pattern",
                "**",
                "gitignore",
                false,
                "hidden",
                true));
    assertThat(paths(everything))
        .contains("build/out.java", "notes.log", ".hidden/secret.txt", ".gitignore");
  }

  @Test
  void globNeverFollowsLinksOutOfTheTree() throws Exception {
    List<Map<String, Object>> found =
        lines(post("/api/file/glob", "path", top.toString(), "pattern", "**/far*"));
    assertThat(paths(found)).containsExactly("far-link.txt");
    assertThat(found.getFirst()).containsEntry("type", "symlink");
  }

  @Test
  void globStopsAtItsLimit() throws Exception {
    List<Map<String, Object>> found =
        lines(post("/api/file/glob", "path", top.toString(), "pattern", "**", "limit", 2));
    assertThat(found).hasSize(3);
    assertThat(summary(found)).containsEntry("matches", 2).containsEntry("truncated", true);
  }

  @Test
  void grepFindsLiteralLinesSkippingIgnoredBinaryAndLinkedFiles() throws Exception {
    List<Map<String, Object>> found =
        lines(
            post(
                "/api/file/grep",
                "path",
                top.toString(),
                "pattern",
                "needle",
                "fixed_strings",
                true));
    assertThat(paths(found))
        .containsExactlyInAnyOrder("src/main/App.java", "src/test/test_app.java", "keep.log");
    Map<String, Object> app =
        found.stream()
            .filter(l -> String.valueOf(l.get("path")).endsWith("App.java"))
            .findFirst()
            .orElseThrow();
    assertThat(app)
        .containsEntry("type", "match")
        .containsEntry("line", 2)
        .containsEntry("text", "  // TODO: needle one");
    assertThat(summary(found))
        .containsEntry("matches", 3)
        .containsEntry("files_matched", 3)
        .containsEntry("binary_skipped", 1)
        .containsEntry("truncated", false);
  }

  @Test
  void grepRegexCaseAndFileFilters() throws Exception {
    List<Map<String, Object>> insensitive =
        lines(
            post(
                "/api/file/grep",
                "path",
                top.toString(),
                "pattern",
                "NEEDLE",
                "fixed_strings",
                true,
                "case_insensitive",
                true,
                "include",
                List.of("*.md", "*.java"),
                "exclude",
                List.of("src/test/**")));
    assertThat(paths(insensitive)).containsExactlyInAnyOrder("README.md", "src/main/App.java");

    List<Map<String, Object>> regex =
        lines(post("/api/file/grep", "path", top.toString(), "pattern", "^needle (in|kept) \\w+"));
    assertThat(paths(regex)).containsExactlyInAnyOrder("src/test/test_app.java", "keep.log");

    HttpResponse<String> bad =
        post("/api/file/grep", "path", top.toString(), "pattern", "(unclosed");
    assertThat(bad.statusCode()).isEqualTo(422);
    assertThat(bad.body()).contains("invalid regular expression").contains("fixed_strings");
  }

  @Test
  void grepGivesContextLinesAcrossBlocksOfABigFile() throws Exception {
    StringBuilder text = new StringBuilder();
    for (int i = 1; i <= 200_000; i++) {
      text.append(i == 150_000 ? "the needle line" : "filler line number " + i).append('\n');
    }
    write("big/huge.txt", text.toString());
    assertThat(Files.size(top.resolve("big/huge.txt"))).isGreaterThan(3 << 20);

    List<Map<String, Object>> found =
        lines(
            post(
                "/api/file/grep",
                "path",
                top.resolve("big").toString(),
                "pattern",
                "the needle",
                "before_context",
                2,
                "after_context",
                1));
    assertThat(found).hasSize(2);
    assertThat(found.getFirst())
        .containsEntry("line", 150_000)
        .containsEntry("text", "the needle line")
        .containsEntry("before", List.of("filler line number 149998", "filler line number 149999"))
        .containsEntry("after", List.of("filler line number 150001"));
  }

  @Test
  void grepBoundsResultsPerFileAndInAll() throws Exception {
    write("many/a.txt", "hit\n".repeat(50));
    write("many/b.txt", "hit\n".repeat(50));
    Path many = top.resolve("many");

    List<Map<String, Object>> perFile =
        lines(post("/api/file/grep", "path", many.toString(), "pattern", "hit", "max_per_file", 3));
    assertThat(summary(perFile)).containsEntry("matches", 6).containsEntry("truncated", true);
    List<Map<String, Object>> total =
        lines(post("/api/file/grep", "path", many.toString(), "pattern", "hit", "max_results", 70));
    assertThat(summary(total)).containsEntry("matches", 70).containsEntry("truncated", true);
    assertThat(total).hasSize(71);
  }

  @Test
  void grepLinesAreCappedInLength() throws Exception {
    write("wide/line.txt", "x".repeat(5000) + "needle" + "\n");

    List<Map<String, Object>> found =
        lines(
            post(
                "/api/file/grep",
                "path",
                top.resolve("wide").toString(),
                "pattern",
                "needle",
                "max_line_chars",
                100));
    assertThat(found.getFirst()).containsEntry("line_truncated", true);
    assertThat((String) found.getFirst().get("text")).hasSize(100);
  }

  @Test
  void searchesStopAtTheirDeadline() throws Exception {
    for (int i = 0; i < 300; i++) {
      write("slow/d" + i + "/f.txt", "needle\n");
    }
    List<Map<String, Object>> grep =
        lines(
            post(
                "/api/file/grep",
                "path",
                top.resolve("slow").toString(),
                "pattern",
                "needle",
                "timeout_ms",
                1));
    assertThat(summary(grep)).containsEntry("timed_out", true);
    assertThat((Integer) summary(grep).get("matches")).isLessThan(300);
    List<Map<String, Object>> glob =
        lines(
            post(
                "/api/file/glob",
                "path",
                top.resolve("slow").toString(),
                "pattern",
                "**",
                "timeout_ms",
                1));
    assertThat(summary(glob)).containsEntry("timed_out", true);
  }

  @Test
  void searchesStayInsideTheAllowedRoots() throws Exception {
    HttpResponse<String> viaLink =
        post("/api/file/grep", "path", top.resolve("escape").toString(), "pattern", "needle");
    assertThat(viaLink.statusCode()).isEqualTo(403);
    HttpResponse<String> outsideGlob =
        post("/api/file/glob", "path", outside.toString(), "pattern", "**");
    assertThat(outsideGlob.statusCode()).isEqualTo(403);
    HttpResponse<String> missing =
        post("/api/file/glob", "path", top.resolve("nope").toString(), "pattern", "**");
    assertThat(missing.statusCode()).isEqualTo(404);
    HttpResponse<String> typo =
        post("/api/file/grep", "path", top.toString(), "pattern", "x", "max_result", 3);
    assertThat(typo.statusCode()).isEqualTo(422);
  }

  @Test
  void gitignoreOfTheRepositoryAboveAppliesToASearchBelowIt() throws Exception {
    Files.createDirectories(top.resolve(".git"));
    write(".gitignore", "generated/\n");
    write("src/generated/Gen.java", "needle generated\n");

    List<Map<String, Object>> found =
        lines(post("/api/file/grep", "path", top.resolve("src").toString(), "pattern", "needle"));
    assertThat(paths(found))
        .containsExactlyInAnyOrder("src/main/App.java", "src/test/test_app.java");
  }
}
