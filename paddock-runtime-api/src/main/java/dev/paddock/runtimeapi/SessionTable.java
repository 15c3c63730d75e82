package dev.paddock.runtimeapi;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The sessions this runtime API holds, by session id and by runtime id, with the capacity limit.
 * Thread-safe: one monitor guards both maps (held only for map updates, never across backend
 * calls).
 */
final class SessionTable {
  private final int maxSessions;

  // Guarded by this.
  private final Map<String, Session> bySessionId = new LinkedHashMap<>();
  private final Map<String, Session> byRuntimeId = new LinkedHashMap<>();

  SessionTable(int maxSessions) {
    this.maxSessions = maxSessions;
  }

  /** Outcome of {@link #reserve}. */
  enum Reservation {
    RESERVED,
    TAKEN,
    FULL
  }

  /** Adds {@code session} unless its id is taken or the table is full. */
  synchronized Reservation reserve(Session session) {
    if (bySessionId.containsKey(session.sessionId())) {
      return Reservation.TAKEN;
    }
    if (bySessionId.size() >= maxSessions) {
      return Reservation.FULL;
    }
    bySessionId.put(session.sessionId(), session);
    byRuntimeId.put(session.runtimeId(), session);
    return Reservation.RESERVED;
  }

  /**
   * Puts back a session saved before a restart, even past the maximum (which may have been lowered
   * meanwhile: its sandboxes exist all the same).
   *
   * @throws IllegalStateException when its session or runtime id is held already
   */
  synchronized void restore(Session session) {
    if (bySessionId.containsKey(session.sessionId())
        || byRuntimeId.containsKey(session.runtimeId())) {
      throw new IllegalStateException("session " + session.sessionId() + " is saved twice");
    }
    bySessionId.put(session.sessionId(), session);
    byRuntimeId.put(session.runtimeId(), session);
  }

  synchronized void remove(Session session) {
    bySessionId.remove(session.sessionId(), session);
    byRuntimeId.remove(session.runtimeId(), session);
  }

  synchronized Optional<Session> bySessionId(String id) {
    return Optional.ofNullable(bySessionId.get(id));
  }

  synchronized Optional<Session> byRuntimeId(String id) {
    return Optional.ofNullable(byRuntimeId.get(id));
  }

  /** Every session, oldest first. */
  synchronized List<Session> all() {
    return new ArrayList<>(bySessionId.values());
  }

  synchronized int size() {
    return bySessionId.size();
  }

  int max() {
    return maxSessions;
  }
}
