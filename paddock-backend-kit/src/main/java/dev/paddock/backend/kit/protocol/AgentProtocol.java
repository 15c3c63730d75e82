package dev.paddock.backend.kit.protocol;

import java.util.Map;

/**
 * The wire names of the agent-server's protocol as the control plane, the backends and the agent
 * itself spell them: headers, routes, archive formats and archive headers. The one place they are
 * written down (the agent's own routes and {@code paddock-client} use the same values).
 */
public final class AgentProtocol {
  /** Carries a session key on every {@code /api} request (OpenHands' name). */
  public static final String SESSION_KEY_HEADER = "X-Session-API-Key";

  /** Carries the sandbox's admin key on admin routes and control-plane archive downloads. */
  public static final String ADMIN_KEY_HEADER = "X-Paddock-Admin-Key";

  /** {@code GET}: 200 as soon as the agent serves (no key). */
  public static final String ALIVE = "/alive";

  /** {@code GET}: the agent's facts, including {@code idle_time} in seconds (no key). */
  public static final String SERVER_INFO = "/server_info";

  /**
   * {@code PUT} {@code {"session_api_key_sha256": [digest...]}} with the admin key: replaces the
   * session keys the agent accepts.
   */
  public static final String SESSION_KEYS = "/admin/session-keys";

  /** The JSON field of {@link #SESSION_KEYS}. */
  public static final String SESSION_KEYS_FIELD = "session_api_key_sha256";

  /** {@code GET ?format=F}: the workspace archive, streamed. */
  public static final String ARCHIVE = "/api/file/archive";

  /** {@code GET}: the sandbox's OS and runtime versions. */
  public static final String ENVIRONMENT = "/api/environment";

  /** Archive format: the whole workspace as a gzipped tar. */
  public static final String TAR_GZ = "tar.gz";

  /** Archive format: the changes against the repository's base commit, as a patch. */
  public static final String GIT_DELTA = "git-delta";

  /**
   * The archive's response headers (values percent-encoded by the agent), each with the manifest
   * field it fills.
   */
  public static final Map<String, String> ARCHIVE_HEADERS =
      Map.of(
          "X-Archive-Base-Commit", "base_commit",
          "X-Archive-Repo-Remote", "repo_remote",
          "X-Archive-Branch", "branch",
          "X-Archive-Head-Commit", "head_commit");

  private AgentProtocol() {}
}
