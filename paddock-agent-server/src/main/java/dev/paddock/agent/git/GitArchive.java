package dev.paddock.agent.git;

import dev.paddock.agent.http.Call;
import dev.paddock.agent.http.HttpError;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The git side of {@code GET /api/file/archive}: the {@code git-delta} format and the {@code
 * X-Archive-*} repository headers. Placeholder signatures; the implementation lands with the git
 * routes.
 */
public final class GitArchive {
  private GitArchive() {}

  /**
   * Answers a {@code format=git-delta} archive request for {@code dir} (absolute, an existing
   * directory): resolves the repository like OpenHands (dir itself, or exactly one repository found
   * a bounded depth below it), writes {@code git diff --binary} of the working tree (tracked and
   * untracked files, minus {@code excludes}) against {@code baseRef} (or the automatic base) as a
   * {@code text/x-patch} 200 response with the {@code X-Archive-*} headers. Throws {@link
   * HttpError} 400 when there is no repository or the base is invalid.
   *
   * @param excludes exclude patterns, already including the defaults when they apply
   */
  public static void respondDelta(
      Call call, Path dir, Optional<String> baseRef, List<String> excludes) throws IOException {
    throw HttpError.badRequest("git-delta archives are not implemented yet");
  }

  /**
   * The {@code X-Archive-Repo-Remote} (credentials redacted), {@code X-Archive-Branch}, {@code
   * X-Archive-Head-Commit} and {@code X-Archive-Repo-Root} headers (percent-encoded values) for the
   * repository at or below {@code dir}; empty when there is none.
   */
  public static Map<String, String> repoHeaders(Path dir) {
    return Map.of();
  }
}
