package dev.paddock.agent.git;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code X-Archive-*} headers that describe a repository: origin URL (credentials redacted),
 * branch, head commit and work-tree root, each percent-encoded and left out when git has no value
 * (no origin, detached HEAD, no commit yet).
 */
final class RepoHeaders {
  static final String REMOTE = "X-Archive-Repo-Remote";
  static final String BRANCH = "X-Archive-Branch";
  static final String HEAD_COMMIT = "X-Archive-Head-Commit";
  static final String ROOT = "X-Archive-Repo-Root";

  private final GitCli git;

  RepoHeaders(GitCli git) {
    this.git = git;
  }

  Map<String, String> of(Repo repo) throws IOException {
    Map<String, String> headers = new LinkedHashMap<>();
    value(repo, "config", "--get", "remote.origin.url")
        .ifPresent(url -> headers.put(REMOTE, HeaderValues.redactRemote(url)));
    value(repo, "symbolic-ref", "--quiet", "--short", "HEAD")
        .ifPresent(branch -> headers.put(BRANCH, branch));
    value(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        .ifPresent(commit -> headers.put(HEAD_COMMIT, commit));
    headers.put(ROOT, repo.root().toString());
    headers.replaceAll((name, value) -> HeaderValues.percentEncode(value));
    return headers;
  }

  private Optional<String> value(Repo repo, String... args) throws IOException {
    GitResult result = git.run(GitCommand.in(repo.dir(), args));
    return result.ok() && !result.text().isEmpty() ? Optional.of(result.text()) : Optional.empty();
  }
}
