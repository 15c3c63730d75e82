package dev.paddock.agent.git;

import dev.paddock.agent.user.CommandUser;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The git side of {@code GET /api/file/archive}: the {@code git-delta} format and the {@code
 * X-Archive-*} repository headers. Immutable and thread-safe; each call runs its own git processes
 * as the command user (see {@link DeltaArchive} for how the user's repository is kept untouched).
 */
public final class GitArchive {
  private static final System.Logger LOG = System.getLogger("paddock.agent.git");

  private final GitCli git;

  private GitArchive(GitCli git) {
    this.git = git;
  }

  /** Archives whose git processes run as {@code user}. */
  public static GitArchive create(CommandUser user) {
    return new GitArchive(GitCli.system(user));
  }

  /**
   * Answers a {@code format=git-delta} archive request for {@code dir} (absolute, an existing
   * directory): resolves the repository like OpenHands (the work tree containing dir, or exactly
   * one repository found at most three levels below it, skipping hidden and dependency directories
   * and not following links), writes {@code git diff --binary} of the working tree (tracked and
   * untracked files, minus ignored files and {@code excludes}) against {@code baseRef} (or the
   * automatic base) as a {@code text/x-patch} 200 response with the {@code X-Archive-*} headers.
   *
   * <p>The automatic base is the merge-base of HEAD with its upstream or the origin default branch,
   * else HEAD, else (no commit yet) the empty tree; {@code X-Archive-Base-Commit} and {@code
   * X-Archive-Base-Ref} ({@code auto} or the given ref) are sent only when the base is a commit.
   *
   * <p>Throws {@link HttpError} 400 when there is no repository (or several), when {@code baseRef}
   * starts with {@code -} or names no commit, or when an exclude pattern is unsupported; 500 when
   * git fails or times out (60 s read-tree, 300 s add, 300 s diff). Nothing is sent before the
   * patch is complete, so an error is always a clean JSON reply.
   *
   * @param excludes exclude patterns, already including the defaults when they apply
   */
  public void respondDelta(Call call, Path dir, Optional<String> baseRef, List<String> excludes)
      throws IOException {
    try {
      new DeltaArchive(git).respond(call, dir, baseRef, excludes);
    } catch (GitFailure e) {
      throw e.asHttpError();
    }
  }

  /**
   * The {@code X-Archive-Repo-Remote} (credentials redacted), {@code X-Archive-Branch}, {@code
   * X-Archive-Head-Commit} and {@code X-Archive-Repo-Root} headers (percent-encoded values) for the
   * repository at or below {@code dir}; empty when there is none (or several). Headers git has no
   * value for (no origin, detached HEAD, no commit) are left out.
   */
  public Map<String, String> repoHeaders(Path dir) {
    try {
      RepoFinder repos = new RepoFinder(git);
      Optional<Repo> repo = repos.forHeaders(dir);
      return repo.isPresent() ? new RepoHeaders(git).of(repo.get()) : Map.of();
    } catch (IOException | GitFailure e) {
      // Metadata is best effort: an archive without these headers is still an archive.
      LOG.log(System.Logger.Level.WARNING, "no repository headers for " + dir, e);
      return Map.of();
    }
  }
}
