package dev.paddock.agent.files;

import java.nio.file.Path;
import java.util.Set;

/**
 * Files that may hold credentials and never leave the sandbox in an archive, whatever the exclude
 * settings: inside any {@code .git} directory (at any depth, so submodules' {@code
 * .git/modules/<name>/} too) the {@code config}, {@code config.worktree}, {@code credentials},
 * {@code .git-credentials} and {@code FETCH_HEAD} files, which can carry tokens in remote URLs, and
 * every {@code logs} directory (reflogs repeat those URLs); and a {@code .git-credentials} file
 * anywhere.
 */
final class CredentialScrub {
  private static final Set<String> GIT_SECRETS =
      Set.of("config", "config.worktree", "credentials", ".git-credentials", "FETCH_HEAD", "logs");

  private CredentialScrub() {}

  /** Whether {@code path} (absolute) must be left out of an archive. */
  static boolean isSecret(Path path) {
    Path name = path.getFileName();
    if (name == null) {
      return false;
    }
    if (name.toString().equals(".git-credentials")) {
      return true;
    }
    return GIT_SECRETS.contains(name.toString()) && insideGitDirectory(path.getParent());
  }

  private static boolean insideGitDirectory(Path dir) {
    for (Path element : dir) {
      if (element.toString().equals(".git")) {
        return true;
      }
    }
    return false;
  }
}
