package dev.paddock.api;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A sandbox as its owner sees it (OpenHands' {@code SandboxInfo}).
 *
 * @param id the sandbox id
 * @param createdByUserId the owner, when the sandbox has one
 * @param sandboxSpecId the spec it was made from
 * @param status its live status
 * @param sessionApiKey the key for its agent-server; only present when RUNNING and only in the
 *     reply that issued it (start, resume): the control plane keeps only its hash
 * @param exposedUrls its URLs; empty unless RUNNING
 * @param createdAt when it was created
 * @param statusDetail a short, safe explanation of the status (never raw runtime output)
 */
public record SandboxInfo(
    String id,
    Optional<String> createdByUserId,
    String sandboxSpecId,
    SandboxStatus status,
    Optional<String> sessionApiKey,
    List<ExposedUrl> exposedUrls,
    Instant createdAt,
    Optional<String> statusDetail) {
  public SandboxInfo {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(createdByUserId, "createdByUserId");
    Objects.requireNonNull(sandboxSpecId, "sandboxSpecId");
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(sessionApiKey, "sessionApiKey");
    exposedUrls = List.copyOf(exposedUrls);
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(statusDetail, "statusDetail");
  }

  /** The agent-server's URL, when exposed. */
  public Optional<String> agentServerUrl() {
    return exposedUrls.stream()
        .filter(u -> u.name().equals(ExposedUrl.AGENT_SERVER))
        .map(ExposedUrl::url)
        .findFirst();
  }

  /** The same sandbox without its session key (for every reply but the one that issued it). */
  public SandboxInfo withoutKey() {
    return withKey(Optional.empty());
  }

  /** The same sandbox carrying {@code key} (or none). */
  public SandboxInfo withKey(Optional<String> key) {
    return new SandboxInfo(
        id, createdByUserId, sandboxSpecId, status, key, exposedUrls, createdAt, statusDetail);
  }
}
