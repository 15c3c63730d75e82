package dev.paddock.controlplane;

import dev.paddock.api.LifetimeAction;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.SandboxAgent;
import dev.paddock.store.ConflictException;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends sandboxes whose lifetime is over ({@code timeoutAt} passed) or that stayed idle for their
 * {@code idleTimeout}, with their {@code onTimeout} / {@code onIdle} action (a delete archives
 * first when archives are on). Deadlines live in the store, so a restart forgets none.
 *
 * <p>Each firing is claimed with the record's version (compare-and-set): the claim moves {@code
 * timeoutAt} a lease ahead, so of several control planes (or passes) exactly one acts now, and if
 * it dies before acting the lease runs out and the next pass acts instead. Pause and delete are
 * idempotent, so that rare retry cannot do harm. Idleness is read from the agent's {@code
 * /server_info} {@code idle_time} (time since it was last busy: a request in flight, a running
 * command or terminal, an open stream or socket) and kept as {@code lastActivityAt}.
 */
final class Lifetimes {
  private static final Logger LOG = LoggerFactory.getLogger(Lifetimes.class);
  static final Duration LEASE = Duration.ofMinutes(2);

  private final SandboxStore store;
  private final ControlPlaneConfig config;
  private final SandboxLifecycle lifecycle;

  Lifetimes(SandboxStore store, ControlPlaneConfig config, SandboxLifecycle lifecycle) {
    this.store = store;
    this.config = config;
    this.lifecycle = lifecycle;
  }

  /** One pass; returns the ids it paused or deleted. */
  List<String> enforce() {
    // Every sandbox is judged before any is ended: a slow pause or archive of one must not age
    // the activity reading of the next.
    Map<SandboxRecord, String> due = new LinkedHashMap<>();
    EnumSet<SandboxStatus> live = EnumSet.of(SandboxStatus.RUNNING, SandboxStatus.PAUSED);
    for (SandboxRecord record : store.withStatus(live)) {
      try {
        reason(record).ifPresent(reason -> due.put(record, reason));
      } catch (RuntimeException e) {
        LOG.warn("sandbox {}: reading its lifetime failed; the next pass retries", record.id(), e);
      }
    }
    List<String> ended = new ArrayList<>();
    due.forEach(
        (record, reason) -> {
          try {
            end(record, reason, ended);
          } catch (RuntimeException e) {
            LOG.warn(
                "sandbox {}: ending its lifetime failed; the next pass retries", record.id(), e);
          }
        });
    return ended;
  }

  private Optional<String> reason(SandboxRecord record) {
    Instant now = config.clock().instant();
    if (record.timeoutAt().isPresent() && !record.timeoutAt().get().isAfter(now)) {
      boolean alreadyPaused =
          record.status() == SandboxStatus.PAUSED
              && record.settings().onTimeout() == LifetimeAction.PAUSE;
      return alreadyPaused ? Optional.empty() : Optional.of("timeout");
    }
    if (record.status() != SandboxStatus.RUNNING || record.settings().idleTimeout().isEmpty()) {
      return Optional.empty();
    }
    Instant lastActive = observeActivity(record, now);
    return lastActive.plus(record.settings().idleTimeout().get()).isAfter(now)
        ? Optional.empty()
        : Optional.of("idle");
  }

  /** The later of the stored last activity and what the agent reports; stored when newer. */
  private Instant observeActivity(SandboxRecord record, Instant now) {
    Instant stored = record.lastActivityAt().orElse(record.createdAt());
    Optional<Instant> reported =
        record
            .runtime()
            .flatMap(lifecycle.keys()::agent)
            .flatMap(SandboxAgent::idleTime)
            .map(idle -> now.minus(idle));
    if (reported.isEmpty() || !reported.get().isAfter(stored.plusSeconds(1))) {
      return stored;
    }
    try {
      store.update(record.withLastActivityAt(reported));
    } catch (ConflictException e) {
      // Changed meanwhile; the next pass reads it again.
    }
    return reported.get();
  }

  private void end(SandboxRecord record, String reason, List<String> ended) {
    if (!claim(record)) {
      return;
    }
    LifetimeAction action =
        reason.equals("timeout") ? record.settings().onTimeout() : record.settings().onIdle();
    LOG.info("sandbox {}: {} reached, {} it", record.id(), reason, action.wireName());
    if (action == LifetimeAction.DELETE) {
      lifecycle.delete(record.id());
    } else {
      lifecycle.pause(record.id());
      lifecycle.records().change(record.id(), r -> r.withTimeoutAt(Optional.empty()));
    }
    config.events().lifetimeEnded(record.id(), reason, action);
    ended.add(record.id());
  }

  /** Moves the deadline a lease ahead if the record is unchanged; false when another got it. */
  private boolean claim(SandboxRecord record) {
    Instant leaseEnd = config.clock().instant().plus(LEASE);
    Optional<Instant> next =
        record.timeoutAt().isPresent() ? Optional.of(leaseEnd) : Optional.empty();
    try {
      store.update(record.withTimeoutAt(next).withLastActivityAt(record.lastActivityAt()));
      return true;
    } catch (ConflictException e) {
      return false;
    }
  }
}
