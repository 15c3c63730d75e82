package dev.paddock.agent;

import dev.paddock.backend.kit.protocol.AgentSecrets;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * {@code --secrets-file}: the secrets a backend put in a file for the agent (a mounted Kubernetes
 * Secret, a file written before the start), read once at start. The file is then deleted, so the
 * secrets are not left on disk for a command to find; when it cannot be deleted because its
 * directory is read-only (a read-only mount), it is left, since the backend that mounted it
 * controls it.
 */
final class SecretsFile {
  private static final System.Logger LOG = System.getLogger("paddock.agent");

  private SecretsFile() {}

  /**
   * Reads the secrets and removes the file where it can. Exits with code 2 when the file is
   * missing, unreadable or malformed, or when it should be removable and is not.
   */
  static AgentSecrets consume(Path file) {
    AgentSecrets secrets = read(file);
    try {
      Files.delete(file);
    } catch (IOException e) {
      if (Files.isWritable(file.toAbsolutePath().getParent())) {
        AgentServerMain.exit("cannot remove the secrets file " + file + " after reading it: " + e);
      }
      LOG.log(
          System.Logger.Level.DEBUG,
          "secrets file {0} is on a read-only mount; left in place",
          file);
    }
    return secrets;
  }

  private static AgentSecrets read(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      return AgentSecrets.read(in);
    } catch (NoSuchFileException e) {
      AgentServerMain.exit("the secrets file " + file + " does not exist");
    } catch (IOException e) {
      AgentServerMain.exit("cannot read the secrets file " + file + ": " + e.getMessage());
    } catch (IllegalArgumentException e) {
      AgentServerMain.exit(e.getMessage() + " in the secrets file " + file);
    }
    throw new AssertionError("exit returned");
  }
}
