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
 * {@code GET /api/git/changes}: what differs between a revision and the work tree, tracked and
 * untracked files alike, for the part of the repository at and below a directory. Paths are
 * relative to that directory.
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
   * The changes under {@code dir} (an existing directory) against {@code ref}; empty when {@code
   * dir} is not in a repository. 400 when the ref names no commit or git refuses otherwise.
   */
  List<Change> against(Path dir, String ref) throws IOException {
    Optional<Repo> repo = repos.containing(dir);
    if (repo.isEmpty()) {
      return List.of();
    }
    String base = revisions.treeish(dir, "ref", ref);
    List<Change> changes = new ArrayList<>(tracked(dir, base));
    for (String path : fields(run(dir, "ls-files", "-z", "--others", "--exclude-standard"))) {
      changes.add(new Change(Status.ADDED, path));
    }
    changes.sort(Comparator.comparing(Change::path));
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
                "--relative",
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
