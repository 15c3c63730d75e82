package dev.paddock.controlplane;

import dev.paddock.store.QueueEntry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The start queue's admission order: round-robin across owners, FIFO within an owner. A create is
 * given a turn (a round number) when it joins: one more than the latest turn of its owner's creates
 * still waiting, or, when its owner has none waiting, the turn of the queue's head (it joins the
 * round being served). The queue is ordered by turn, then by join time, then id. So a burst of one
 * owner's creates takes turns 0, 1, 2..., while another owner's first create takes the head's turn
 * and goes right after the head: an owner waits behind at most one create of each other owner per
 * round. Creates without an owner share one owner's turns. Turns are stored with the entry, so
 * every replica computes the same order.
 */
final class FairOrder {
  private static final Comparator<QueueEntry> ORDER =
      Comparator.comparingLong(QueueEntry::turn)
          .thenComparing(QueueEntry::enqueuedAt)
          .thenComparing(QueueEntry::sandboxId);

  private FairOrder() {}

  /** {@code entries} in admission order. */
  static List<QueueEntry> of(List<QueueEntry> entries) {
    List<QueueEntry> ordered = new ArrayList<>(entries);
    ordered.sort(ORDER);
    return ordered;
  }

  /** The turn a new create of {@code owner} takes, given the entries waiting now. */
  static long turnFor(Optional<String> owner, List<QueueEntry> waiting) {
    return waiting.stream()
        .filter(e -> e.owner().equals(owner))
        .mapToLong(QueueEntry::turn)
        .max()
        .stream()
        .map(t -> t + 1)
        .findFirst()
        .orElseGet(() -> waiting.stream().mapToLong(QueueEntry::turn).min().orElse(0));
  }
}
