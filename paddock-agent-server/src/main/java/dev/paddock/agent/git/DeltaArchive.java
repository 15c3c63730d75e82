package dev.paddock.agent.git;

import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code git-delta} archive: one binary patch that turns a checkout of the base commit into the
 * current work tree (modified, added, untracked, deleted, renamed and binary files), minus ignored
 * and excluded paths.
 *
 * <p>The user's repository is left untouched: git works on a scratch index ({@code GIT_INDEX_FILE})
 * and writes the blobs it hashes into a scratch object directory that borrows the repository's
 * objects as an alternate. The patch is spooled to a scratch file before the response starts, so a
 * git failure or timeout is a clean error reply rather than a truncated 200, and the reply carries
 * a Content-Length. The scratch directory is deleted when the request ends, whatever happened.
 */
final class DeltaArchive {
  static final Duration READ_TREE_TIMEOUT = Duration.ofSeconds(60);
  static final Duration ADD_TIMEOUT = Duration.ofSeconds(300);
  static final Duration DIFF_TIMEOUT = Duration.ofSeconds(300);

  static final String FORMAT = "X-Archive-Format";
  static final String BASE_COMMIT = "X-Archive-Base-Commit";
  static final String BASE_REF = "X-Archive-Base-Ref";

  private final GitCli git;
  private final RepoFinder repos;
  private final Revisions revisions;
  private final RepoHeaders repoHeaders;

  DeltaArchive(GitCli git) {
    this.git = git;
    this.repos = new RepoFinder(git);
    this.revisions = new Revisions(git);
    this.repoHeaders = new RepoHeaders(git);
  }

  void respond(Call call, Path dir, Optional<String> baseRef, List<String> excludes)
      throws IOException {
    baseRef.ifPresent(ref -> Revisions.checkRef("base_ref", ref));
    List<String> pathspecs = ExcludePathspecs.of(excludes);
    Repo repo = repos.forArchive(dir);
    Optional<String> baseCommit = baseCommit(repo, baseRef);
    Map<String, String> headers = repoHeaders.of(repo);
    // The patch is opened, then the scratch directory removed, then the patch sent from the open
    // file: the client's last byte arrives after the scratch is gone, never before it.
    InputStream patch = null;
    long size;
    try (ScratchDir scratch = ScratchDir.beside(repo.root())) {
      Path file = writePatch(repo, baseCommit, pathspecs, scratch);
      size = Files.size(file);
      patch = Files.newInputStream(file);
    } catch (IOException | RuntimeException e) {
      if (patch != null) {
        try {
          patch.close();
        } catch (IOException closing) {
          e.addSuppressed(closing);
        }
      }
      throw e;
    }
    try (InputStream opened = patch) {
      headers.forEach(call::setHeader);
      call.setHeader(FORMAT, "git-delta");
      baseCommit.ifPresent(
          commit -> {
            call.setHeader(BASE_COMMIT, commit);
            call.setHeader(BASE_REF, HeaderValues.percentEncode(baseRef.orElse("auto")));
          });
      call.setHeader("Content-Disposition", "attachment; filename=\"" + fileName(repo) + "\"");
      try (OutputStream out = call.stream(200, "text/x-patch", size)) {
        opened.transferTo(out);
      }
    }
  }

  /** The commit named by {@code baseRef} (400 if none), or the automatic base. */
  private Optional<String> baseCommit(Repo repo, Optional<String> baseRef) throws IOException {
    if (baseRef.isEmpty()) {
      return revisions.autoBase(repo.dir());
    }
    Optional<String> commit = revisions.commit(repo.dir(), baseRef.get());
    if (commit.isEmpty()) {
      throw HttpError.badRequest(
          "'base_ref' names no commit in " + repo.root() + ": '" + baseRef.get() + "'");
    }
    return commit;
  }

  private Path writePatch(
      Repo repo, Optional<String> baseCommit, List<String> pathspecs, ScratchDir scratch)
      throws IOException {
    Map<String, String> env = scratchEnvironment(repo, scratch);
    String base = baseCommit.isPresent() ? baseCommit.get() : revisions.emptyTree(repo.dir());
    List<String> readTree =
        baseCommit.isPresent() ? List.of("read-tree", base) : List.of("read-tree", "--empty");
    check(git.run(command(repo, readTree, env, READ_TREE_TIMEOUT)));
    List<String> add = new ArrayList<>(List.of("add", "--all", "--", "."));
    add.addAll(pathspecs);
    check(git.run(command(repo, add, env, ADD_TIMEOUT)));
    Path patch = scratch.resolve("archive.patch");
    check(git.runToFile(command(repo, diff(base), env, DIFF_TIMEOUT), patch));
    return patch;
  }

  /**
   * {@code git diff} options pinned against user configuration that would change the patch format
   * ({@code diff.noprefix}, {@code diff.relative}, external diff drivers, colour, textconv).
   */
  private static List<String> diff(String base) {
    return List.of(
        "-c",
        "diff.relative=false",
        "-c",
        "diff.noprefix=false",
        "diff",
        "--cached",
        "--binary",
        "--find-renames",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        base,
        "--",
        ".");
  }

  private Map<String, String> scratchEnvironment(Repo repo, ScratchDir scratch) throws IOException {
    GitResult common = git.run(GitCommand.in(repo.dir(), "rev-parse", "--git-common-dir"));
    check(common);
    Path objects = repo.dir().resolve(common.text()).resolve("objects").normalize();
    // git writes the scratch index and objects as the command user, in directories it owns.
    Path work = scratch.createDirectoryFor("git", git.user());
    Path scratchObjects = scratch.createDirectoryFor("git/objects", git.user());
    return Map.of(
        "GIT_INDEX_FILE", work.resolve("index").toString(),
        "GIT_OBJECT_DIRECTORY", scratchObjects.toString(),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES", objects.toString());
  }

  private static GitCommand command(
      Repo repo, List<String> args, Map<String, String> env, Duration timeout) {
    return GitCommand.in(repo.dir(), args).withEnv(env).withTimeout(timeout);
  }

  /** A failing step is our problem, not the client's: the request itself was valid by now. */
  private static void check(GitResult result) {
    if (!result.ok()) {
      throw new GitFailure("git-delta archive failed: " + result.message());
    }
  }

  /** {@code <root name>.patch}, reduced to characters that are safe in a quoted header value. */
  private static String fileName(Repo repo) {
    Path name = repo.root().getFileName();
    String base = name == null ? "workspace" : name.toString().replaceAll("[^A-Za-z0-9._-]", "_");
    return base + ".patch";
  }
}
