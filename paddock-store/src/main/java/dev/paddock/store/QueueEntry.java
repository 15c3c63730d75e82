package dev.paddock.store;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One create waiting in the start queue, beside its QUEUED sandbox record.
 *
 * @param sandboxId the queued sandbox
 * @param owner its owner (empty: no owner)
 * @param turn the round-robin round it joined in; admission order is turn, then enqueue time
 * @param enqueuedAt when it joined the queue (FIFO order within an owner)
 * @param deadline when its create gives up
 * @param holder the control-plane instance whose request waits for it
 * @param leaseUntil until when that instance vouches it still waits; renewed while it does
 */
public record QueueEntry(
    String sandboxId,
    Optional<String> owner,
    long turn,
    Instant enqueuedAt,
    Instant deadline,
    String holder,
    Instant leaseUntil) {
  public QueueEntry {
    Objects.requireNonNull(sandboxId, "sandboxId");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(enqueuedAt, "enqueuedAt");
    Objects.requireNonNull(deadline, "deadline");
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(leaseUntil, "leaseUntil");
  }
}
