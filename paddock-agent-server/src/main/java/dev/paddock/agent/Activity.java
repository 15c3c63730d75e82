package dev.paddock.agent;

import dev.paddock.http.ActivityListener;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * What {@code idle_time} measures: the agent is busy while an authorized request is in flight (a
 * streamed response or an event stream included), a WebSocket is open, a command runs or a terminal
 * runs, and idle since the last of these ended (or the last terminal input or output). So a long
 * build with nobody polling keeps its sandbox from being paused or deleted for idleness, and the
 * idle clock starts when the work ends. Lock-free; safe from any thread.
 */
final class Activity implements ActivityListener {
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicLong lastNanos = new AtomicLong(System.nanoTime());
  private final BooleanSupplier working;

  /**
   * @param working true while something not tracked by {@link #started}/{@link #ended} runs
   *     (terminals); asked only when nothing else keeps the agent busy
   */
  Activity(BooleanSupplier working) {
    this.working = working;
  }

  @Override
  public void started() {
    inFlight.incrementAndGet();
    touch();
  }

  @Override
  public void ended() {
    touch();
    inFlight.decrementAndGet();
  }

  /** Marks the agent active now (terminal input and output, a terminal's end). */
  void touch() {
    lastNanos.set(System.nanoTime());
  }

  /** Seconds since the agent was last busy; 0 while it is. */
  double idleSeconds(long nowNanos) {
    if (inFlight.get() > 0 || working.getAsBoolean()) {
      return 0;
    }
    return Math.max(0, nowNanos - lastNanos.get()) / 1e9;
  }
}
