package dev.paddock.cli;

import dev.paddock.api.SandboxInfo;
import dev.paddock.client.AgentClient;
import dev.paddock.client.PaddockClient;
import dev.paddock.client.PaddockClientException;
import dev.paddock.client.RemoteFile;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/**
 * {@code paddock cp SRC ID:DEST} uploads, {@code paddock cp ID:SRC DEST} downloads: files and whole
 * directories, with permission bits, times and symbolic links (copied as links) kept. Where the
 * copy lands follows {@code cp -r} and {@code docker cp}: into DEST when DEST is an existing
 * directory (as {@code DEST/<name of SRC>}), else as DEST itself (its parent must exist); a DEST
 * ending in {@code /} must be an existing directory; a SRC ending in {@code /.} copies the
 * directory's contents rather than the directory; a directory never replaces a file.
 */
@Command(
    name = "cp",
    mixinStandardHelpOptions = true,
    description = {
      "Copy files or directories into (SRC ID:/path) or out of (ID:/path DEST) a sandbox.",
      "DEST an existing directory: the copy goes inside it; DEST/ must exist; SRC/. copies"
          + " a directory's contents. Modes, times and links are kept."
    })
final class CpCommand implements Callable<Integer> {
  @Mixin Connection connection;

  @Parameters(index = "0", paramLabel = "SOURCE")
  String source;

  @Parameters(index = "1", paramLabel = "DEST")
  String destination;

  @Override
  public Integer call() {
    boolean upload = remote(destination);
    if (upload == remote(source)) {
      throw new IllegalArgumentException(
          "exactly one side must be ID:/absolute/path, e.g. paddock cp notes.txt abc123:/workspace/");
    }
    String remote = upload ? destination : source;
    int colon = remote.indexOf(':');
    String id = remote.substring(0, colon);
    String path = remote.substring(colon + 1);
    PaddockClient client = connection.client();
    SandboxInfo sandbox =
        client.get(id).orElseThrow(() -> new PaddockClientException(404, "no sandbox " + id));
    AgentClient agent = client.agent(sandbox);
    if (upload) {
      upload(agent, source, path);
    } else {
      download(agent, path, destination);
    }
    return 0;
  }

  private static void upload(AgentClient agent, String source, String dest) {
    boolean contents = source.endsWith("/.");
    Path src = Path.of(contents ? source.substring(0, source.length() - 2) : source);
    if (!Files.exists(src, LinkOption.NOFOLLOW_LINKS)) {
      throw new IllegalArgumentException(source + ": no such file or directory");
    }
    boolean srcIsDirectory = Files.isDirectory(src, LinkOption.NOFOLLOW_LINKS);
    Optional<RemoteFile> existing = agent.stat(dest);
    if (existing.isPresent() && existing.get().isDirectory()) {
      String name = contents && srcIsDirectory ? "" : name(src.toAbsolutePath().toString());
      agent.uploadTree(src, dest, name);
      return;
    }
    if (dest.endsWith("/")) {
      throw new IllegalArgumentException(dest + ": no such directory in the sandbox");
    }
    if (existing.isPresent() && srcIsDirectory) {
      throw new IllegalArgumentException(
          "cannot copy the directory " + source + " onto the file " + dest);
    }
    String parent = parent(dest);
    if (!agent.stat(parent).map(RemoteFile::isDirectory).orElse(false)) {
      throw new IllegalArgumentException(parent + ": no such directory in the sandbox");
    }
    agent.uploadTree(src, parent, name(dest));
  }

  private static void download(AgentClient agent, String source, String destination) {
    boolean contents = source.endsWith("/.");
    String src = contents ? source.substring(0, source.length() - 2) : source;
    RemoteFile found =
        agent
            .stat(src)
            .orElseThrow(
                () -> new IllegalArgumentException(source + ": no such file or directory"));
    Path dest = Path.of(destination);
    Path target;
    if (Files.isDirectory(dest)) {
      target = contents && found.isDirectory() ? dest : dest.resolve(name(src));
    } else if (destination.endsWith("/")) {
      throw new IllegalArgumentException(destination + ": no such directory");
    } else if (Files.exists(dest, LinkOption.NOFOLLOW_LINKS) && found.isDirectory()) {
      throw new IllegalArgumentException(
          "cannot copy the directory " + source + " onto the file " + destination);
    } else {
      Path parent = dest.toAbsolutePath().getParent();
      if (!Files.isDirectory(parent)) {
        throw new IllegalArgumentException(parent + ": no such directory");
      }
      target = dest;
    }
    if (found.isDirectory()) {
      agent.downloadTree(src, target);
    } else {
      agent.download(src, target);
    }
  }

  /** The last name of a path, trailing slashes ignored ({@code /a/b/} is {@code b}). */
  static String name(String path) {
    String p = stripSlashes(path);
    String name = p.substring(p.lastIndexOf('/') + 1);
    if (name.isEmpty() || name.equals(".") || name.equals("..")) {
      throw new IllegalArgumentException("'" + path + "' names no file to copy or create");
    }
    return name;
  }

  private static String parent(String path) {
    String p = stripSlashes(path);
    int slash = p.lastIndexOf('/');
    return slash <= 0 ? "/" : p.substring(0, slash);
  }

  private static String stripSlashes(String path) {
    String p = path;
    while (p.length() > 1 && p.endsWith("/")) {
      p = p.substring(0, p.length() - 1);
    }
    return p;
  }

  private static boolean remote(String spec) {
    int colon = spec.indexOf(':');
    return colon > 0 && colon + 1 < spec.length() && spec.charAt(colon + 1) == '/';
  }
}
