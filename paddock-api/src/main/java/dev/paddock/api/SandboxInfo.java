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
 * @param sessionApiKey the key for its agent-server; only present when RUNNING, for its owner (the
 *     control plane keeps only its hash and derives the key again when the owner asks)
 * @param exposedUrls its URLs; empty unless RUNNING
 * @param createdAt when it was created
 * @param statusDetail a short, safe explanation of the status (never raw runtime output)
 * @param settings what it was created with: image, labels, effective resources and working
 *     directory, idle timeout and the lifetime actions
 * @param timeoutAt when its lifetime ends (then {@code settings.onTimeout()}); empty: never
 * @param lastActivityAt when it was last seen active (an API call that reached its agent, or work
 *     running in it), as far as the control plane knows
 * @param unenforcedLimits the names ({@code cpus}, {@code memory}, {@code pids}, {@code disk}) of
 *     the asked-for limits its backend could not enforce; empty when all were or none was asked
 * @param queue where it stands in the start queue; present only while {@link SandboxStatus#QUEUED}
 */
public record SandboxInfo(
    String id,
    Optional<String> createdByUserId,
    String sandboxSpecId,
    SandboxStatus status,
    Optional<String> sessionApiKey,
    List<ExposedUrl> exposedUrls,
    Instant createdAt,
    Optional<String> statusDetail,
    SandboxSettings settings,
    Optional<Instant> timeoutAt,
    Optional<Instant> lastActivityAt,
    List<String> unenforcedLimits,
    Optional<QueuePlace> queue) {
  public SandboxInfo {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(createdByUserId, "createdByUserId");
    Objects.requireNonNull(sandboxSpecId, "sandboxSpecId");
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(sessionApiKey, "sessionApiKey");
    exposedUrls = List.copyOf(exposedUrls);
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(statusDetail, "statusDetail");
    Objects.requireNonNull(settings, "settings");
    Objects.requireNonNull(timeoutAt, "timeoutAt");
    Objects.requireNonNull(lastActivityAt, "lastActivityAt");
    unenforcedLimits = List.copyOf(unenforcedLimits);
    Objects.requireNonNull(queue, "queue");
  }

  /** A sandbox that is not queued. */
  public SandboxInfo(
      String id,
      Optional<String> createdByUserId,
      String sandboxSpecId,
      SandboxStatus status,
      Optional<String> sessionApiKey,
      List<ExposedUrl> exposedUrls,
      Instant createdAt,
      Optional<String> statusDetail,
      SandboxSettings settings,
      Optional<Instant> timeoutAt,
      Optional<Instant> lastActivityAt,
      List<String> unenforcedLimits) {
    this(
        id,
        createdByUserId,
        sandboxSpecId,
        status,
        sessionApiKey,
        exposedUrls,
        createdAt,
        statusDetail,
        settings,
        timeoutAt,
        lastActivityAt,
        unenforcedLimits,
        Optional.empty());
  }

  /** A sandbox with no settings beyond its spec (OpenHands' shape). */
  public SandboxInfo(
      String id,
      Optional<String> createdByUserId,
      String sandboxSpecId,
      SandboxStatus status,
      Optional<String> sessionApiKey,
      List<ExposedUrl> exposedUrls,
      Instant createdAt,
      Optional<String> statusDetail) {
    this(
        id,
        createdByUserId,
        sandboxSpecId,
        status,
        sessionApiKey,
        exposedUrls,
        createdAt,
        statusDetail,
        SandboxSettings.NONE,
        Optional.empty(),
        Optional.empty(),
        List.of());
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
        id,
        createdByUserId,
        sandboxSpecId,
        status,
        key,
        exposedUrls,
        createdAt,
        statusDetail,
        settings,
        timeoutAt,
        lastActivityAt,
        unenforcedLimits,
        queue);
  }

  /** The same sandbox reached at {@code urls} (e.g. through the gateway), all else unchanged. */
  public SandboxInfo withExposedUrls(List<ExposedUrl> urls) {
    return new SandboxInfo(
        id,
        createdByUserId,
        sandboxSpecId,
        status,
        sessionApiKey,
        urls,
        createdAt,
        statusDetail,
        settings,
        timeoutAt,
        lastActivityAt,
        unenforcedLimits,
        queue);
  }

  /** The same sandbox showing {@code place} in the start queue. */
  public SandboxInfo withQueue(QueuePlace place) {
    return new SandboxInfo(
        id,
        createdByUserId,
        sandboxSpecId,
        status,
        sessionApiKey,
        exposedUrls,
        createdAt,
        statusDetail,
        settings,
        timeoutAt,
        lastActivityAt,
        unenforcedLimits,
        Optional.of(place));
  }
}
