package dev.paddock.agent.git;

import dev.paddock.http.HttpError;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Finds the repository a request means. {@link #containing} asks git (a directory inside a work
 * tree counts); {@link #forArchive} also looks a few levels down, because agents usually clone into
 * a subdirectory of the workspace they are asked to archive.
 */
final class RepoFinder {
  /** How many directory levels below the requested one are searched. */
  static final int MAX_DEPTH = 3;

  private static final Set<String> SKIPPED =
      Set.of("node_modules", "venv", "site-packages", "vendor");

  private final GitCli git;

  RepoFinder(GitCli git) {
    this.git = git;
  }

  /**
   * The work tree containing {@code dir} (an existing directory); empty when git says it is not in
   * one. Other git errors (such as "dubious ownership") are a 400 carrying git's message.
   */
  Optional<Repo> containing(Path dir) throws IOException {
    GitResult result = git.run(GitCommand.in(dir, "rev-parse", "--show-toplevel"));
    if (result.ok()) {
      return Optional.of(new Repo(dir, Path.of(result.text())));
    }
    if (result.stderr().contains("not a git repository")) {
      return Optional.empty();
    }
    throw HttpError.badRequest("git cannot use " + dir + ": " + result.message());
  }

  /**
   * The repository to archive for {@code dir}: the work tree containing it, else the single
   * repository found at most {@link #MAX_DEPTH} levels below it. 400 when there is none or more
   * than one.
   */
  Repo forArchive(Path dir) throws IOException {
    Optional<Repo> own = containing(dir);
    if (own.isPresent()) {
      return own.get();
    }
    List<Path> found = below(dir);
    if (found.size() == 1) {
      Optional<Repo> repo = containing(found.get(0));
      if (repo.isPresent()) {
        return repo.get();
      }
    }
    throw HttpError.badRequest(
        "not a git repository: "
            + dir
            + (found.isEmpty()
                ? " (no repository in it or up to " + MAX_DEPTH + " levels below)"
                : " (found " + found.size() + " repositories below it; name one)"));
  }

  /** Like {@link #forArchive} but empty instead of 400 (for metadata headers). */
  Optional<Repo> forHeaders(Path dir) throws IOException {
    try {
      return Optional.of(forArchive(dir));
    } catch (HttpError e) {
      return Optional.empty();
    }
  }

  /**
   * The directories right below {@code dir} with a {@code .git} entry (a clone or a worktree),
   * hidden ones and symbolic links left out (as OpenHands' {@code ./*}{@code /.git} glob), in name
   * order.
   */
  static List<Path> oneLevelBelow(Path dir) {
    List<Path> found = new ArrayList<>();
    try (DirectoryStream<Path> children = Files.newDirectoryStream(dir)) {
      for (Path child : children) {
        if (!child.getFileName().toString().startsWith(".")
            && Files.isDirectory(child, LinkOption.NOFOLLOW_LINKS)
            && Files.exists(child.resolve(".git"), LinkOption.NOFOLLOW_LINKS)) {
          found.add(child);
        }
      }
    } catch (IOException e) {
      // An unreadable directory shows no repository.
    }
    found.sort(null);
    return found;
  }

  /**
   * Directories with a {@code .git} entry below {@code dir}, depth-first to {@link #MAX_DEPTH},
   * neither following symbolic links nor entering hidden or dependency directories nor descending
   * into a repository once found.
   */
  static List<Path> below(Path dir) {
    List<Path> found = new ArrayList<>();
    search(dir, 1, found);
    return found;
  }

  private static void search(Path dir, int depth, List<Path> found) {
    if (depth > MAX_DEPTH) {
      return;
    }
    try (DirectoryStream<Path> children = Files.newDirectoryStream(dir)) {
      for (Path child : children) {
        if (!descendable(child)) {
          continue;
        }
        if (Files.exists(child.resolve(".git"), LinkOption.NOFOLLOW_LINKS)) {
          found.add(child);
        } else {
          search(child, depth + 1, found);
        }
      }
    } catch (IOException e) {
      // An unreadable directory holds no repository we could archive anyway.
    }
  }

  private static boolean descendable(Path child) {
    String name = child.getFileName().toString();
    return !name.startsWith(".")
        && !SKIPPED.contains(name)
        && Files.isDirectory(child, LinkOption.NOFOLLOW_LINKS);
  }
}
