package dev.paddock.agent.files;

import static dev.paddock.agent.files.UploadDownloadTest.q;
import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.agent.SwappedDirectory;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The creation half of D3: directories and links are made with {@code mkdirat}/{@code symlinkat}
 * relative to the open parent, so while a thread flips a workspace directory between a real
 * directory and a link to a canary outside the only root, creating directories ({@code
 * create_directory}, with and without missing parents) and links (a tar upload, a copy of a tree
 * holding a link) through it never adds anything to the canary, even though the canary is
 * world-writable: the command user could write there, so only the descriptor keeps the entry out.
 */
class CreationRaceTest {
  private static final int ATTEMPTS = 2_000;
  private static final int CLIENTS = 4;

  @RegisterExtension final AgentFixture agent = AgentFixture.confinedToWorkspace();

  @Test
  void createdDirectoriesAndLinksNeverLandOutsideTheRoot() throws Exception {
    Path tree = Files.createDirectories(agent.workspace().resolve("tree"));
    Files.writeString(tree.resolve("f.txt"), "inside");
    Files.createSymbolicLink(tree.resolve("link"), Path.of("f.txt"));
    byte[] tar = tarWithALink();
    SwappedDirectory d =
        SwappedDirectory.start(agent.workspace(), agent.scratch(), Map.of("f.txt", "inside"));
    try (d) {
      d.race(ATTEMPTS, CLIENTS, i -> attempt(i, d.path().toString(), tree, tar), Set.of(200, 403));
    }

    assertThat(d.escapes())
        .as("requests that failed (statuses %s, %s flips)", d.statuses(), d.flips())
        .isEmpty();
    assertThat(d.canaryNow())
        .as("the world-writable canary after the race (statuses %s)", d.statuses())
        .isEqualTo(d.canaryBefore());
    assertThat(d.count(200))
        .as("creations through the real directory (statuses %s)", d.statuses())
        .isGreaterThan(SwappedDirectory.LEAST_EACH);
    assertThat(d.count(403))
        .as("creations that met the link (refused: outside the roots)")
        .isGreaterThan(SwappedDirectory.LEAST_EACH);
  }

  /** Every name is new, so each request really creates something. */
  private HttpResponse<String> attempt(int i, String dir, Path tree, byte[] tar) throws Exception {
    return switch (i % 4) {
      case 0 -> createDirectory(dir + "/made-" + i);
      case 1 -> createDirectory(dir + "/parent-" + i + "/child");
      case 2 ->
          agent.send(
              agent
                  .request("/api/file/upload_tar?path=" + q(Path.of(dir, "tar-" + i)))
                  .POST(HttpRequest.BodyPublishers.ofByteArray(tar))
                  .build());
      default ->
          agent.postJson(
              "/api/file/copy",
              "{\"source\":"
                  + AgentFixture.quote(tree.toString())
                  + ",\"destination\":"
                  + AgentFixture.quote(dir + "/copy-" + i)
                  + "}");
    };
  }

  private HttpResponse<String> createDirectory(String path) throws Exception {
    return agent.postJson(
        "/api/file/create_directory", "{\"path\":" + AgentFixture.quote(path) + "}");
  }

  /** {@code d/}, {@code d/f.txt} and {@code d/link -> f.txt}. */
  static byte[] tarWithALink() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (TarArchiveOutputStream out = new TarArchiveOutputStream(bytes)) {
      out.putArchiveEntry(new TarArchiveEntry("d/"));
      out.closeArchiveEntry();
      byte[] content = "hello".getBytes(StandardCharsets.UTF_8);
      TarArchiveEntry file = new TarArchiveEntry("d/f.txt");
      file.setSize(content.length);
      out.putArchiveEntry(file);
      out.write(content);
      out.closeArchiveEntry();
      TarArchiveEntry link = new TarArchiveEntry("d/link", TarConstants.LF_SYMLINK);
      link.setLinkName("f.txt");
      out.putArchiveEntry(link);
      out.closeArchiveEntry();
    }
    return bytes.toByteArray();
  }
}
