package dev.paddock.agent.git;

import dev.paddock.http.HttpError;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;

/**
 * {@code GET /api/git/diff}: a file's text in the work tree and at a revision, for a side-by-side
 * view. Either side is absent when the file does not exist there. A symbolic link reads as its
 * target path (what git stores), never as the file it points to. Each side is limited to {@link
 * #MAX_BYTES}; text is decoded as UTF-8 with malformed bytes replaced.
 */
final class FileVersions {
  static final int MAX_BYTES = 10 << 20;

  /**
   * Both sides of the diff.
   *
   * @param modified the work-tree text, if the file exists there
   * @param original the text at the revision, if the file exists there
   */
  record Versions(Optional<String> modified, Optional<String> original) {}

  private final GitCli git;
  private final RepoFinder repos;
  private final Revisions revisions;

  FileVersions(GitCli git) {
    this.git = git;
    this.repos = new RepoFinder(git);
    this.revisions = new Revisions(git);
  }

  /**
   * The versions of {@code file} (absolute, not a directory) in the work tree and at {@code rev}
   * (the repository's {@link Revisions#displayBase display base} when absent, as {@code
   * git_changes} uses); both absent when the file is not in a repository. 400 when {@code rev}
   * names no commit.
   */
  Versions of(Path file, String param, Optional<String> rev) throws IOException {
    Path cwd = nearestDirectory(file);
    Optional<Repo> repo = repos.containing(cwd);
    if (repo.isEmpty()) {
      return new Versions(Optional.empty(), Optional.empty());
    }
    Optional<String> modified = workTree(file);
    Optional<String> base =
        rev.isPresent()
            ? explicit(cwd, param, rev.get())
            : Optional.of(revisions.displayBase(repo.get().root()));
    Optional<String> original =
        base.isPresent() ? atCommit(cwd, cwd.relativize(file), base.get()) : Optional.empty();
    return new Versions(modified, original);
  }

  /** The commit {@code rev} names; empty for HEAD on a branch without commits; else 400. */
  private Optional<String> explicit(Path cwd, String param, String rev) throws IOException {
    Optional<String> commit = revisions.commit(cwd, rev);
    if (commit.isEmpty() && !rev.equals(Revisions.HEAD)) {
      throw HttpError.badRequest(
          "'" + param + "' names no commit in this repository: '" + rev + "'");
    }
    return commit;
  }

  /** The file's directory, or its closest existing ancestor when the file was deleted with it. */
  private static Path nearestDirectory(Path file) {
    Path dir = file.getParent();
    while (dir != null && !Files.isDirectory(dir)) {
      dir = dir.getParent();
    }
    if (dir == null) {
      throw HttpError.badRequest("no existing directory above " + file);
    }
    return dir;
  }

  private static Optional<String> workTree(Path file) throws IOException {
    if (Files.isSymbolicLink(file)) {
      return Optional.of(Files.readSymbolicLink(file).toString());
    }
    if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
      return Optional.empty();
    }
    try (InputStream in = Files.newInputStream(file)) {
      return Optional.of(text(in.readNBytes(MAX_BYTES + 1), file.toString()));
    }
  }

  /**
   * The blob at {@code relative} (to {@code cwd}) in {@code commit} (or a tree id); empty if it is
   * none.
   */
  private Optional<String> atCommit(Path cwd, Path relative, String commit) throws IOException {
    GitResult entry =
        git.run(GitCommand.in(cwd, "ls-tree", "-z", commit, "--", relative.toString()));
    String[] fields = entry.text().split("[ \t\0]", 4);
    if (!entry.ok() || fields.length < 3 || !fields[1].equals("blob")) {
      return Optional.empty();
    }
    GitResult blob =
        git.run(GitCommand.in(cwd, "cat-file", "blob", fields[2]).withMaxOutput(MAX_BYTES + 1));
    if (!blob.ok()) {
      throw new GitFailure("cannot read " + relative + " at " + commit + ": " + blob.message());
    }
    return Optional.of(text(blob.stdout(), relative + " at " + commit));
  }

  private static String text(byte[] bytes, String what) {
    if (bytes.length > MAX_BYTES) {
      throw HttpError.badRequest(what + " is larger than " + MAX_BYTES + " bytes");
    }
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
