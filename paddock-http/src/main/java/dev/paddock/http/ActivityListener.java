package dev.paddock.http;

/**
 * Told when authorized work on a protected route begins and ends: each request (for as long as its
 * handler runs, a streamed response included) and each WebSocket (from open to close). Every {@link
 * #started} is followed by exactly one {@link #ended}; calls come from many threads at once.
 */
public interface ActivityListener {
  /** Nothing to track. */
  ActivityListener NONE =
      new ActivityListener() {
        @Override
        public void started() {}

        @Override
        public void ended() {}
      };

  void started();

  void ended();
}
