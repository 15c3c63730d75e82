package dev.paddock.agent.bash;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * The bash event history: every event in log order, bounded by count, age and spooled bytes.
 * Guarded by {@code this}. Lock order: a {@link CommandRecord} lock may be held while calling
 * {@link #add}; this class never takes a record's lock while holding its own ({@link #prune}
 * returns the dropped events so the caller can release their records afterwards).
 *
 * <p>The count bound holds at every moment: {@link #add} evicts the oldest events itself and keeps
 * them until the next {@link #prune} hands them to the caller for release.
 */
final class EventLog {
  private final NavigableMap<Long, BashEvent> bySeq = new TreeMap<>();
  private final Map<String, BashEvent> byId = new HashMap<>();
  private final List<BashEvent> evicted = new ArrayList<>();
  private final int maxEvents;
  private final Duration maxAge;
  private long nextSeq;

  EventLog(int maxEvents, Duration maxAge) {
    this.maxEvents = maxEvents;
    this.maxAge = maxAge;
  }

  /** Completed (and replaced) on every {@link #add}: stream readers wait on it for news. */
  private volatile CompletableFuture<Void> changed = new CompletableFuture<>();

  synchronized void add(BashEvent event) {
    CompletableFuture<Void> waiting = changed;
    changed = new CompletableFuture<>();
    waiting.complete(null);
    event.seq(nextSeq++);
    bySeq.put(event.seq(), event);
    byId.put(event.id(), event);
    while (bySeq.size() > maxEvents) {
      BashEvent oldest = bySeq.pollFirstEntry().getValue();
      byId.remove(oldest.id());
      evicted.add(oldest);
    }
  }

  /**
   * A future completed by the next {@link #add}. Take it before reading with {@link #after}, so an
   * event added in between completes it rather than being missed.
   */
  CompletableFuture<Void> changed() {
    return changed;
  }

  /** Up to {@code max} events with a sequence number above {@code seq}, in order. */
  synchronized List<BashEvent> after(long seq, int max) {
    List<BashEvent> events = new ArrayList<>(Math.min(max, 64));
    for (BashEvent event : bySeq.tailMap(seq, false).values()) {
      if (events.size() == max) {
        break;
      }
      events.add(event);
    }
    return events;
  }

  /** The sequence number the next event will get (one past the last). */
  synchronized long nextSeq() {
    return nextSeq;
  }

  synchronized Optional<BashEvent> get(String id) {
    return Optional.ofNullable(byId.get(id));
  }

  synchronized int size() {
    return bySeq.size();
  }

  /**
   * Drops events past the count or age bound (oldest first); returns what was dropped, including
   * what {@link #add} evicted since the last call.
   */
  List<BashEvent> prune() {
    List<BashEvent> dropped = new ArrayList<>();
    Instant oldest = Instant.now().minus(maxAge);
    synchronized (this) {
      dropped.addAll(evicted);
      evicted.clear();
      while (!bySeq.isEmpty()) {
        BashEvent first = bySeq.firstEntry().getValue();
        boolean tooMany = bySeq.size() > maxEvents;
        boolean tooOld = first.timestamp().isBefore(oldest) && !first.command().running();
        if (!tooMany && !tooOld) {
          break;
        }
        bySeq.pollFirstEntry();
        byId.remove(first.id());
        dropped.add(first);
      }
    }
    return dropped;
  }

  /** Removes every event matching {@code condition}; returns them. */
  List<BashEvent> removeIf(Predicate<BashEvent> condition) {
    List<BashEvent> dropped = new ArrayList<>();
    synchronized (this) {
      var it = bySeq.values().iterator();
      while (it.hasNext()) {
        BashEvent event = it.next();
        if (condition.test(event)) {
          it.remove();
          byId.remove(event.id());
          dropped.add(event);
        }
      }
    }
    return dropped;
  }

  /** A page of events matching {@code filter}, in log order or reversed, from a page token. */
  synchronized Page page(
      Predicate<BashEvent> filter, boolean descending, Optional<String> pageId, int limit) {
    NavigableMap<Long, BashEvent> view = descending ? bySeq.descendingMap() : bySeq;
    if (pageId.isPresent()) {
      BashEvent start = byId.get(pageId.get());
      if (start == null) {
        return new Page(List.of(), Optional.empty());
      }
      view = view.tailMap(start.seq(), true);
    }
    List<BashEvent> items = new ArrayList<>(Math.min(limit, 128));
    for (BashEvent event : view.values()) {
      if (!filter.test(event)) {
        continue;
      }
      if (items.size() == limit) {
        return new Page(items, Optional.of(event.id()));
      }
      items.add(event);
    }
    return new Page(items, Optional.empty());
  }

  record Page(List<BashEvent> items, Optional<String> nextPageId) {}
}
