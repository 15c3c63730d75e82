package dev.paddock.agent.git;

import dev.paddock.http.HttpError;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * {@code GET /api/git/changes}, with OpenHands' meaning: what differs between a base and the work
 * tree, tracked and untracked files alike, for the whole repository a directory is in (paths
 * relative to its top), plus every repository one level below the directory (paths prefixed with
 * its directory), so a workspace that holds clones reports each of them. Without a ref each
 * repository compares with its own {@link Revisions#displayBase display base}.
 *
 * <p>Renames are reported ({@code MOVED}) when git can pair them, that is for files it tracks
 * (committed or staged); a file moved with plain {@code mv} shows as a deletion plus an addition
 * until it is staged. Ignored files are not reported.
 */
final class WorkingTreeChanges {
  /** One changed path. */
  record Change(Status status, String path) {}

  /** The OpenHands change kinds. */
  enum Status {
    ADDED,
    DELETED,
    UPDATED,
    MOVED
  }

  private final GitCli git;
  private final RepoFinder repos;
  private final Revisions revisions;

  WorkingTreeChanges(GitCli git) {
    this.git = git;
    this.repos = new RepoFinder(git);
    this.revisions = new Revisions(git);
  }

  /**
   * The changes for {@code dir} (an existing directory) against {@code ref}, or each repository's
   * display base when absent; empty when neither {@code dir} nor any directory right below it is in
   * a repository. 400 when the ref names no commit in the repository {@code dir} is in (or, when it
   * is in none, in none of those below it), or git refuses otherwise.
   */
  List<Change> against(Path requested, Optional<String> ref) throws IOException {
    // As git names repositories: by real path, so prefixes come out right below a symbolic link.
    Path dir = requested.toRealPath();
    Optional<Repo> own = repos.containing(dir);
    Path top = own.map(Repo::root).orElse(dir);
    List<Path> nested = new ArrayList<>();
    for (Path child : RepoFinder.oneLevelBelow(dir)) {
      Optional<Repo> repo = repos.containing(child);
      if (repo.isPresent() && repo.get().root().equals(child)) {
        nested.add(child);
      }
    }
    List<Change> changes = new ArrayList<>();
    if (own.isPresent()) {
      for (Change change : inRepository(top, base(top, ref))) {
        if (nested.stream().noneMatch(n -> isUnder(change.path(), prefix(top, n)))) {
          changes.add(change);
        }
      }
    }
    boolean refFound = own.isPresent() || ref.isEmpty();
    for (Path repo : nested) {
      Optional<String> base =
          ref.isEmpty() ? Optional.of(revisions.displayBase(repo)) : explicit(repo, ref.get());
      if (base.isEmpty()) {
        continue; // The ref is another repository's: this one is skipped, as OpenHands does.
      }
      refFound = true;
      String prefix = prefix(top, repo);
      for (Change change : inRepository(repo, base.get())) {
        changes.add(new Change(change.status(), prefix + "/" + change.path()));
      }
    }
    if (!refFound) {
      throw HttpError.badRequest(
          "'ref' names no commit in any repository below " + dir + ": '" + ref.get() + "'");
    }
    changes.sort(Comparator.comparing(Change::path));
    return changes;
  }

  private String base(Path root, Optional<String> ref) throws IOException {
    return ref.isPresent()
        ? revisions.treeish(root, "ref", ref.get())
        : revisions.displayBase(root);
  }

  /** The tree {@code ref} names in {@code repo}, empty when it names none there. */
  private Optional<String> explicit(Path repo, String ref) throws IOException {
    Optional<String> commit = revisions.commit(repo, ref);
    if (commit.isEmpty() && ref.equals(Revisions.HEAD)) {
      return Optional.of(revisions.emptyTree(repo));
    }
    return commit;
  }

  private static String prefix(Path top, Path repo) {
    return top.relativize(repo).toString();
  }

  /**
   * Whether {@code path} (as git prints it; a nested repository may end in '/') is in {@code dir}.
   */
  private static boolean isUnder(String path, String dir) {
    return path.equals(dir) || path.startsWith(dir + "/");
  }

  /** Tracked and untracked changes of the repository whose top is {@code root}. */
  private List<Change> inRepository(Path root, String base) throws IOException {
    List<Change> changes = new ArrayList<>(tracked(root, base));
    for (String path : fields(run(root, "ls-files", "-z", "--others", "--exclude-standard"))) {
      changes.add(new Change(Status.ADDED, path));
    }
    return changes;
  }

  private List<Change> tracked(Path dir, String base) throws IOException {
    List<String> fields =
        fields(
            run(
                dir,
                "diff",
                "--name-status",
                "-z",
                "--find-renames",
                "--no-color",
                "--no-ext-diff",
                base,
                "--"));
    List<Change> changes = new ArrayList<>();
    for (int i = 0; i < fields.size(); i++) {
      String code = fields.get(i);
      boolean paired = code.startsWith("R") || code.startsWith("C");
      i += paired ? 2 : 1;
      changes.add(new Change(status(code), fields.get(i)));
    }
    return changes;
  }

  /** git's one-letter status as an OpenHands kind; a copy is an addition of the new path. */
  private static Status status(String code) {
    return switch (code.charAt(0)) {
      case 'A', 'C' -> Status.ADDED;
      case 'D' -> Status.DELETED;
      case 'R' -> Status.MOVED;
      default -> Status.UPDATED;
    };
  }

  private byte[] run(Path dir, String... args) throws IOException {
    GitResult result = git.run(GitCommand.in(dir, args));
    if (!result.ok()) {
      throw HttpError.badRequest(result.message());
    }
    return result.stdout();
  }

  /** NUL-separated fields of {@code -z} output. */
  private static List<String> fields(byte[] output) {
    List<String> fields = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < output.length; i++) {
      if (output[i] == 0) {
        fields.add(new String(output, start, i - start, StandardCharsets.UTF_8));
        start = i + 1;
      }
    }
    return fields;
  }
}
