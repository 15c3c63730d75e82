package dev.paddock.controlplane;

import dev.paddock.api.Caller;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxService;
import dev.paddock.api.SandboxStatus;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes sandboxes that ended and were left, so none accumulate (the seed's {@code docker
 * container prune --filter until=24h}): ERROR and MISSING ones {@link Ages#ended} after their last
 * change, PAUSED ones {@link Ages#paused} after it when the operator turned that on. A delete goes
 * through the service, so it archives first when archives are on, and in REQUIRED mode a sandbox
 * whose archive fails is kept (the next pass tries again). Thread-safe; {@code paddock server}
 * calls {@link #reap} with every reconcile pass.
 */
public final class SandboxReaper {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxReaper.class);
  private static final Caller REAPER = Caller.admin("paddock-reaper");

  /**
   * @param ended age of an ERROR or MISSING sandbox's last change before it is deleted; zero: never
   * @param paused the same for PAUSED sandboxes; zero: never
   */
  public record Ages(Duration ended, Duration paused) {
    public Ages {
      Objects.requireNonNull(ended, "ended");
      Objects.requireNonNull(paused, "paused");
      if (ended.isNegative() || paused.isNegative()) {
        throw new IllegalArgumentException("reap ages must not be negative");
      }
    }
  }

  private final SandboxService service;
  private final SandboxStore store;
  private final Ages ages;
  private final Clock clock;

  private SandboxReaper(SandboxService service, SandboxStore store, Ages ages, Clock clock) {
    this.service = service;
    this.store = store;
    this.ages = ages;
    this.clock = clock;
  }

  /** A reaper deleting through {@code service} what {@code store} holds past {@code ages}. */
  public static SandboxReaper create(
      SandboxService service, SandboxStore store, Ages ages, Clock clock) {
    return new SandboxReaper(
        Objects.requireNonNull(service, "service"),
        Objects.requireNonNull(store, "store"),
        Objects.requireNonNull(ages, "ages"),
        Objects.requireNonNull(clock, "clock"));
  }

  /** One pass; returns the ids it deleted. A delete that fails is logged and retried next pass. */
  public List<String> reap() {
    List<String> reaped = new ArrayList<>();
    for (SandboxRecord record : due()) {
      try {
        if (service.delete(REAPER, record.id())) {
          LOG.info(
              "sandbox {}: {} since {}, reaped", record.id(), record.status(), changed(record));
          reaped.add(record.id());
        }
      } catch (SandboxException e) {
        LOG.warn(
            "sandbox {}: reaping failed, kept (next pass retries): {}",
            record.id(),
            e.getMessage());
      }
    }
    return reaped;
  }

  private List<SandboxRecord> due() {
    Instant now = clock.instant();
    List<SandboxRecord> due = new ArrayList<>();
    if (!ages.ended().isZero()) {
      store.withStatus(List.of(SandboxStatus.ERROR, SandboxStatus.MISSING)).stream()
          .filter(r -> !changed(r).plus(ages.ended()).isAfter(now))
          .forEach(due::add);
    }
    if (!ages.paused().isZero()) {
      store.withStatus(List.of(SandboxStatus.PAUSED)).stream()
          .filter(r -> !changed(r).plus(ages.paused()).isAfter(now))
          .forEach(due::add);
    }
    return due;
  }

  private static Instant changed(SandboxRecord record) {
    return record.updatedAt();
  }
}
