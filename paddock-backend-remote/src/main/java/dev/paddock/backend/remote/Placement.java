package dev.paddock.backend.remote;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Chooses the runtime API a new sandbox goes to: the most free capacity as each reported it, less
 * the starts this backend has in flight there (a report read before another start's {@code /start}
 * arrived would otherwise send a burst of starts to one host); ties go round-robin. Once placed, a
 * sandbox stays on its host (its handle names it). Thread-safe; the monitor is held only for the
 * choice, never across a call.
 */
final class Placement {
  /** A host's free capacity as reported; {@link #UNKNOWN} when it has no capacity route. */
  record Offer(RemoteHost host, int free) {}

  static final int UNKNOWN = Integer.MAX_VALUE / 2;

  // Guarded by this.
  private final Map<RemoteHost, Integer> inFlight = new HashMap<>();
  private long turn;

  /**
   * The hosts to try in order, best first, the first one reserved (call {@link #release} when its
   * start is answered). Hosts with nothing free are left out.
   */
  synchronized List<RemoteHost> choose(List<Offer> offers) {
    long start = turn++;
    List<Offer> ranked = new ArrayList<>();
    for (Offer offer : offers) {
      int free = offer.free() - inFlight.getOrDefault(offer.host(), 0);
      if (free > 0) {
        ranked.add(new Offer(offer.host(), free));
      }
    }
    int n = offers.size();
    Comparator<Offer> byFree = Comparator.comparingInt(Offer::free).reversed();
    ranked.sort(
        byFree.thenComparingLong(o -> Math.floorMod(offers.indexOf(find(offers, o)) - start, n)));
    List<RemoteHost> order = ranked.stream().map(Offer::host).toList();
    if (!order.isEmpty()) {
      inFlight.merge(order.get(0), 1, Integer::sum);
    }
    return order;
  }

  /** Moves the reservation from one host to the next one tried. */
  synchronized void move(RemoteHost from, RemoteHost to) {
    release(from);
    inFlight.merge(to, 1, Integer::sum);
  }

  synchronized void release(RemoteHost host) {
    inFlight.computeIfPresent(host, (h, count) -> count <= 1 ? null : count - 1);
  }

  private static Offer find(List<Offer> offers, Offer ranked) {
    return offers.stream().filter(o -> o.host().equals(ranked.host())).findFirst().orElseThrow();
  }
}
