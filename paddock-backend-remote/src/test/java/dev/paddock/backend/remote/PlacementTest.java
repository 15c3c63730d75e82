package dev.paddock.backend.remote;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class PlacementTest {
  private static final RemoteHost A = new RemoteHost("http://a:1", "ka");
  private static final RemoteHost B = new RemoteHost("http://b:1", "kb");

  private final Placement placement = new Placement();

  @Test
  void theHostWithMoreFreeCapacityComesFirstAndAFullOneIsLeftOut() {
    assertThat(placement.choose(List.of(new Placement.Offer(A, 2), new Placement.Offer(B, 5))))
        .containsExactly(B, A);
    assertThat(placement.choose(List.of(new Placement.Offer(A, 0), new Placement.Offer(B, 5))))
        .containsExactly(B);
  }

  @Test
  void startsInFlightCountAgainstAHostSoABurstIsSpread() {
    List<Placement.Offer> sameReport =
        List.of(new Placement.Offer(A, 10), new Placement.Offer(B, 10));
    int onA = 0;
    for (int i = 0; i < 10; i++) {
      if (placement.choose(sameReport).get(0).equals(A)) {
        onA++;
      }
    }
    assertThat(onA).isEqualTo(5);
  }

  @Test
  void equalHostsTakeTurnsOnceStartsAreAnswered() {
    List<Placement.Offer> equal = List.of(new Placement.Offer(A, 3), new Placement.Offer(B, 3));
    RemoteHost first = placement.choose(equal).get(0);
    placement.release(first);
    RemoteHost second = placement.choose(equal).get(0);
    assertThat(second).isNotEqualTo(first);
  }

  @Test
  void nothingFreeAnywhereIsAnEmptyChoice() {
    assertThat(placement.choose(List.of(new Placement.Offer(A, 0)))).isEmpty();
  }
}
