package dev.paddock.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.store.QueueEntry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class FairOrderTest {
  private static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");
  private final List<QueueEntry> queue = new ArrayList<>();

  private void join(String id, String owner) {
    Optional<String> who = Optional.of(owner);
    Instant at = T0.plusSeconds(queue.size());
    queue.add(
        new QueueEntry(
            id,
            who,
            FairOrder.turnFor(who, queue),
            at,
            at.plusSeconds(60),
            "cp",
            at.plusSeconds(9)));
  }

  private List<String> order() {
    return FairOrder.of(queue).stream().map(QueueEntry::sandboxId).toList();
  }

  private void admitHead() {
    queue.remove(FairOrder.of(queue).getFirst());
  }

  @Test
  void anotherUsersFirstCreateGoesRightAfterTheHeadOfABurst() {
    join("a1", "alice");
    join("a2", "alice");
    join("a3", "alice");
    join("b1", "bob");

    assertThat(order()).containsExactly("a1", "b1", "a2", "a3");
  }

  @Test
  void servedUserWaitsBehindTheOtherUsersCurrentRound() {
    join("a1", "alice");
    join("a2", "alice");
    join("a3", "alice");
    join("b1", "bob");
    admitHead();
    join("b2", "bob");
    join("c1", "carol");

    assertThat(order()).containsExactly("b1", "c1", "a2", "b2", "a3");
  }

  @Test
  void withinOneUserCreatesLeaveInTheOrderTheyJoined() {
    join("a1", "alice");
    join("a2", "alice");
    admitHead();
    join("a3", "alice");

    assertThat(order()).containsExactly("a2", "a3");
  }
}
