package dev.paddock.agent.git;

import dev.paddock.http.HttpError;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Validates revisions that come from requests and resolves them to object ids, so that only full
 * hex ids (never client text) reach the git commands that do the work. A revision starting with
 * {@code -} is refused before any git runs: git would read it as an option.
 */
final class Revisions {
  static final String HEAD = "HEAD";
  private static final Pattern COMMIT_ID = Pattern.compile("[0-9a-fA-F]{4,64}");
  private static final int MAX_REF_LENGTH = 256;

  /** Where {@link #autoBase} looks for the upstream, best first. */
  private static final List<String> UPSTREAMS =
      List.of(
          "@{upstream}",
          "refs/remotes/origin/HEAD",
          "refs/remotes/origin/main",
          "refs/remotes/origin/master");

  private final GitCli git;

  Revisions(GitCli git) {
    this.git = git;
  }

  /** Returns {@code ref} if it is a plausible revision; else 400 naming {@code param}. */
  static String checkRef(String param, String ref) {
    if (ref.isEmpty()) {
      throw HttpError.badRequest("'" + param + "' must not be empty");
    }
    if (ref.startsWith("-")) {
      throw HttpError.badRequest("'" + param + "' must not start with '-', got '" + ref + "'");
    }
    if (ref.length() > MAX_REF_LENGTH || ref.chars().anyMatch(c -> c <= ' ' || c == 0x7f)) {
      throw HttpError.badRequest(
          "'" + param + "' must be a git revision without spaces or control characters");
    }
    return ref;
  }

  /** Returns {@code commit} if it is 4 to 64 hex digits; else 400. */
  static String checkCommitId(String commit) {
    if (!COMMIT_ID.matcher(commit).matches()) {
      throw HttpError.badRequest("'commit' must be 4 to 64 hex digits, got '" + commit + "'");
    }
    return commit;
  }

  /** The full id of the commit {@code rev} names in the repository at {@code cwd}, if any. */
  Optional<String> commit(Path cwd, String rev) throws IOException {
    GitResult result =
        git.run(GitCommand.in(cwd, "rev-parse", "--verify", "--quiet", rev + "^{commit}"));
    return result.ok() ? Optional.of(result.text()) : Optional.empty();
  }

  /**
   * The tree to compare against for {@code ref}: the commit it names, or the empty tree when it is
   * {@code HEAD} on a branch without commits (a new repository or an orphan branch). 400 when the
   * revision names no commit.
   */
  String treeish(Path cwd, String param, String ref) throws IOException {
    Optional<String> commit = commit(cwd, ref);
    if (commit.isPresent()) {
      return commit.get();
    }
    if (ref.equals(HEAD)) {
      return emptyTree(cwd);
    }
    throw HttpError.badRequest("'" + param + "' names no commit in this repository: '" + ref + "'");
  }

  /** The id of the empty tree in this repository's hash format (SHA-1 or SHA-256). */
  String emptyTree(Path cwd) throws IOException {
    GitResult result = git.run(GitCommand.in(cwd, "hash-object", "-t", "tree", "--stdin"));
    if (!result.ok()) {
      throw new GitFailure("cannot compute the empty tree id: " + result.message());
    }
    return result.text();
  }

  /**
   * The automatic archive base: the merge-base of {@code HEAD} with the branch's upstream or the
   * origin default branch (so the base is a commit the remote has), else {@code HEAD} itself, else
   * nothing for a branch without commits.
   */
  Optional<String> autoBase(Path cwd) throws IOException {
    Optional<String> head = commit(cwd, HEAD);
    if (head.isEmpty()) {
      return head;
    }
    for (String upstream : UPSTREAMS) {
      Optional<String> tip = commit(cwd, upstream);
      if (tip.isPresent()) {
        Optional<String> base = mergeBase(cwd, head.get(), tip.get());
        if (base.isPresent()) {
          return base;
        }
      }
    }
    return head;
  }

  /**
   * The base {@code git_changes} and {@code git_diff} compare with when no ref is given (OpenHands'
   * display policy), so that work committed but not pushed, or pushed to a branch of its own, stays
   * visible:
   *
   * <ol>
   *   <li>the fork point from the branch's upstream ({@code @{upstream}}, else {@code
   *       origin/<branch>}), unless that is HEAD itself with no tracked change (a fully pushed
   *       branch would then show nothing of its work);
   *   <li>the fork point from the origin's default branch ({@code origin/HEAD}, {@code main},
   *       {@code master}), or that branch's tip when they share no history;
   *   <li>without an origin, the local {@code main} or {@code master} when HEAD was forked from it;
   *   <li>HEAD ({@code git status} style); the empty tree on a branch without commits.
   * </ol>
   */
  String displayBase(Path root) throws IOException {
    Optional<String> head = commit(root, HEAD);
    if (head.isEmpty()) {
      return emptyTree(root);
    }
    Optional<String> branch = currentBranch(root);
    if (branch.isPresent()) {
      Optional<String> upstream =
          firstCommit(root, List.of("@{upstream}", "refs/remotes/origin/" + branch.get()));
      if (upstream.isPresent()) {
        String forkPoint = mergeBase(root, head.get(), upstream.get()).orElse(upstream.get());
        if (!forkPoint.equals(head.get()) || hasTrackedChanges(root)) {
          return forkPoint;
        }
      }
    }
    Optional<String> originDefault = firstCommit(root, UPSTREAMS.subList(1, UPSTREAMS.size()));
    if (originDefault.isPresent()) {
      return mergeBase(root, head.get(), originDefault.get()).orElse(originDefault.get());
    }
    for (String local : List.of("main", "master")) {
      Optional<String> tip = commit(root, "refs/heads/" + local);
      if (tip.isPresent()) {
        boolean forked =
            !branch.equals(Optional.of(local))
                && mergeBase(root, head.get(), tip.get()).equals(tip);
        return forked ? tip.get() : head.get();
      }
    }
    return head.get();
  }

  private Optional<String> firstCommit(Path cwd, List<String> revs) throws IOException {
    for (String rev : revs) {
      Optional<String> commit = commit(cwd, rev);
      if (commit.isPresent()) {
        return commit;
      }
    }
    return Optional.empty();
  }

  private Optional<String> currentBranch(Path cwd) throws IOException {
    GitResult result = git.run(GitCommand.in(cwd, "symbolic-ref", "--quiet", "--short", HEAD));
    return result.ok() && !result.text().isEmpty() ? Optional.of(result.text()) : Optional.empty();
  }

  /** Whether the index or work tree differs from HEAD in a tracked file (untracked ones aside). */
  private boolean hasTrackedChanges(Path cwd) throws IOException {
    GitResult result =
        git.run(GitCommand.in(cwd, "status", "--porcelain", "--untracked-files=no", "-z"));
    // Unknown counts as changed: the branch then keeps comparing with its own upstream.
    return !result.ok() || result.stdout().length > 0;
  }

  private Optional<String> mergeBase(Path cwd, String a, String b) throws IOException {
    GitResult result = git.run(GitCommand.in(cwd, "merge-base", a, b));
    return result.ok() ? Optional.of(result.text()) : Optional.empty();
  }
}
