package dev.paddock.api;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * Where a {@link SandboxStatus#QUEUED} sandbox stands in the start queue.
 *
 * @param position its place in admission order, 1 for the next to be admitted
 * @param length how many creates wait in the queue, this one included
 * @param enqueuedAt when it joined the queue
 * @param deadline when it gives up (the create then fails with "at capacity")
 * @param expectedWait a rough estimate of how long until it is admitted: its position times the
 *     recent interval between admissions; empty until this control plane has seen an admission
 */
public record QueuePlace(
    int position,
    int length,
    Instant enqueuedAt,
    Instant deadline,
    Optional<Duration> expectedWait) {
  public QueuePlace {
    if (position < 1 || length < position) {
      throw new IllegalArgumentException(
          "position must be within 1.." + length + ", got " + position);
    }
    Objects.requireNonNull(enqueuedAt, "enqueuedAt");
    Objects.requireNonNull(deadline, "deadline");
    Objects.requireNonNull(expectedWait, "expectedWait");
  }
}
