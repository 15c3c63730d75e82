package dev.paddock.cli;

import dev.paddock.api.SandboxInfo;
import dev.paddock.client.PaddockClient;
import dev.paddock.client.PaddockClientException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/**
 * {@code paddock cp LOCAL ID:/abs/path} uploads; {@code paddock cp ID:/abs/path LOCAL} downloads.
 */
@Command(
    name = "cp",
    description = "Copy a file into (LOCAL ID:/path) or out of (ID:/path LOCAL) a sandbox.")
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
          "exactly one side must be ID:/absolute/path, e.g. paddock cp notes.txt abc123:/workspace/notes.txt");
    }
    String remote = upload ? destination : source;
    int colon = remote.indexOf(':');
    String id = remote.substring(0, colon);
    String path = remote.substring(colon + 1);
    PaddockClient client = connection.client();
    SandboxInfo sandbox =
        client.get(id).orElseThrow(() -> new PaddockClientException(404, "no sandbox " + id));
    if (upload) {
      client.agent(sandbox).upload(Path.of(source), path);
    } else {
      client.agent(sandbox).download(path, Path.of(destination));
    }
    return 0;
  }

  private static boolean remote(String spec) {
    int colon = spec.indexOf(':');
    return colon > 0 && colon + 1 < spec.length() && spec.charAt(colon + 1) == '/';
  }
}
