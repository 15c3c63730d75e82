package dev.paddock.agent.watch;

import java.io.IOException;
import java.util.Map;

/** Where a watch sends its messages (an NDJSON response or a WebSocket); one thread calls it. */
interface WatchSink {
  /** Sends one JSON message; an {@link IOException} (the client went away) ends the watch. */
  void send(Map<String, Object> message) throws IOException;
}
