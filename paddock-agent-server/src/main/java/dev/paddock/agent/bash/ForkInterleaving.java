package dev.paddock.agent.bash;

import java.time.Duration;
import java.util.Optional;

/**
 * Points in a forked command's life at which a test may hold a thread, to replay an interleaving
 * that a loaded machine produces only now and then (a status reader or an output thread that runs
 * late). Production uses {@link #NONE}. Each method is called on the thread named and may block it.
 */
interface ForkInterleaving {
  /** Does nothing: the agent's own interleaving. */
  ForkInterleaving NONE = new ForkInterleaving() {};

  /** On a zygote's status reader, before {@code line} ({@code S}, {@code E} or {@code B}) acts. */
  default void beforeStatus(String line) {}

  /** On an output connection's thread, once it is routed and before its first read. */
  default void beforeOutput(Channel channel) {}

  /**
   * On a forked command's watcher, after each of its checks (timeout, death, output drain); {@code
   * sinceStatus} is how long ago its status came in, empty before.
   */
  default void watcherChecked(Optional<Duration> sinceStatus) {}
}
