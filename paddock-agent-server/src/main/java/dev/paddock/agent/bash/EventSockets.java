package dev.paddock.agent.bash;

import dev.paddock.http.ActivityListener;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.Json;
import dev.paddock.http.JsonBody;
import dev.paddock.http.WebSocket;
import dev.paddock.http.WebSocketListener;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The event WebSockets:
 *
 * <ul>
 *   <li>{@code /sockets/bash-events}, OpenHands' socket: {@code BashCommand}/{@code BashOutput}
 *       frames in OpenHands' JSON; {@code resend_mode=all} first sends the retained history, {@code
 *       since} (with {@code after_timestamp}) what came after that instant, none (the default) only
 *       what happens from now; {@code ExecuteBashRequest} frames start commands, and a frame that
 *       is not one gets a {@code BashError} frame back;
 *   <li>{@code /sockets/events?from_order=N[&command_id=ID]}, Paddock's: the frames of {@link
 *       EventFeed}, reattachable by the last {@code order} seen.
 * </ul>
 *
 * Auth as OpenHands': a {@code session_api_key} query parameter or an {@code X-Session-API-Key}
 * header, checked at once; otherwise a first message {@code {"type":"auth","session_api_key":...}}
 * within {@link #AUTH_WINDOW}. A bad key, a first message that is not a valid auth frame, or none
 * in time closes with 4001 "Authentication failed"; later auth frames are ignored. Over {@link
 * #MAX_SOCKETS} connections per route close with 1013. Keys are compared by the agent's key ring
 * and never logged. Threads: one virtual thread per authenticated socket follows the feed; frames
 * from the client are handled on the connection's reader thread.
 */
final class EventSockets {
  static final Duration AUTH_WINDOW = Duration.ofSeconds(10);
  static final int MAX_SOCKETS = 50;
  static final int AUTH_FAILED = 4001;
  static final int TRY_AGAIN_LATER = 1013;
  private static final String KEY_HEADER = "X-Session-API-Key";
  private static final Set<String> EXECUTE_FIELDS = Set.of("command", "cwd", "timeout");

  private final BashService service;
  private final Function<JsonBody, CommandRequest> requests;
  private final boolean open;
  private final Predicate<String> keyAccepted;
  private final ActivityListener activity;
  private final AtomicInteger bashSockets = new AtomicInteger();
  private final AtomicInteger eventSockets = new AtomicInteger();

  EventSockets(
      BashService service,
      Function<JsonBody, CommandRequest> requests,
      boolean open,
      Predicate<String> keyAccepted,
      ActivityListener activity) {
    this.activity = activity;
    this.service = service;
    this.requests = requests;
    this.open = open;
    this.keyAccepted = keyAccepted;
  }

  /** How the upgrade request authenticated: not at all (yet), or with a good or bad key. */
  private enum Presented {
    NOTHING,
    GOOD,
    BAD
  }

  private Presented presented(Call call) {
    Optional<String> key = call.query("session_api_key").or(() -> call.header(KEY_HEADER));
    if (open) {
      return Presented.GOOD;
    }
    return key.map(k -> keyAccepted.test(k) ? Presented.GOOD : Presented.BAD)
        .orElse(Presented.NOTHING);
  }

  WebSocketListener bashEvents(Call call) {
    call.allowQuery(Set.of("session_api_key", "resend_mode", "after_timestamp", "resend_all"));
    String mode = call.query("resend_mode").orElse("");
    if (call.queryBoolean("resend_all").orElse(false) && mode.isEmpty()) {
      mode = "all"; // OpenHands' deprecated spelling.
    }
    Predicate<BashEvent> filter;
    long after;
    switch (mode) {
      case "all" -> {
        filter = e -> true;
        after = -1;
      }
      case "since" -> {
        Instant since =
            instant(
                call.query("after_timestamp")
                    .orElseThrow(
                        () ->
                            HttpError.unprocessable(
                                "resend_mode=since needs after_timestamp (ISO-8601)")));
        filter = e -> e.timestamp().isAfter(since);
        after = -1;
      }
      case "", "none" -> {
        filter = e -> true;
        after = service.feed().lastOrder();
      }
      default ->
          throw HttpError.unprocessable(
              "resend_mode must be all, since or none, got '" + mode + "'");
    }
    return new Socket(
        presented(call),
        bashSockets,
        "Too many bash event connections",
        true,
        after,
        false,
        filter,
        e -> false,
        new CompletableFuture<>(),
        EventFeed.Format.OPENHANDS);
  }

  WebSocketListener events(Call call) {
    call.allowQuery(Set.of("session_api_key", "from_order", "command_id"));
    long from = call.queryInt("from_order", -1, Integer.MAX_VALUE).orElse(-1);
    Optional<CommandRecord> record =
        call.query("command_id")
            .map(
                id ->
                    service
                        .command(id)
                        .orElseThrow(() -> HttpError.notFound("no command with id " + id)));
    return new Socket(
        presented(call),
        eventSockets,
        "Too many event connections",
        false,
        from,
        from >= 0,
        e -> record.map(r -> e.command() == r).orElse(true),
        e -> record.isPresent() && e instanceof BashEvent.Output o && o.last(),
        record.<CompletableFuture<?>>map(r -> r.result).orElseGet(CompletableFuture::new),
        EventFeed.Format.PADDOCK);
  }

  private static Instant instant(String text) {
    try {
      return OffsetDateTime.parse(text).toInstant();
    } catch (DateTimeParseException e) {
      try {
        return LocalDateTime.parse(text).toInstant(ZoneOffset.UTC);
      } catch (DateTimeParseException e2) {
        throw HttpError.unprocessable("after_timestamp is not an ISO-8601 timestamp");
      }
    }
  }

  /** One connection: auth, then a feed follower, and (bash-events) commands from the client. */
  private final class Socket implements WebSocketListener {
    private final AtomicInteger count;
    private final String busyReason;
    private final boolean acceptsCommands;
    private final long after;
    private final boolean reportGaps;
    private final Predicate<BashEvent> filter;
    private final Predicate<BashEvent> endsAfter;
    private final CompletableFuture<?> finished;
    private final EventFeed.Format format;
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private Presented auth;
    private boolean counted;

    Socket(
        Presented auth,
        AtomicInteger count,
        String busyReason,
        boolean acceptsCommands,
        long after,
        boolean reportGaps,
        Predicate<BashEvent> filter,
        Predicate<BashEvent> endsAfter,
        CompletableFuture<?> finished,
        EventFeed.Format format) {
      this.auth = auth;
      this.count = count;
      this.busyReason = busyReason;
      this.acceptsCommands = acceptsCommands;
      this.after = after;
      this.reportGaps = reportGaps;
      this.filter = filter;
      this.endsAfter = endsAfter;
      this.finished = finished;
      this.format = format;
    }

    @Override
    public void onOpen(WebSocket socket) {
      if (count.incrementAndGet() > MAX_SOCKETS) {
        count.decrementAndGet();
        socket.close(TRY_AGAIN_LATER, busyReason);
        return;
      }
      counted = true;
      switch (auth) {
        case GOOD -> follow(socket);
        case BAD -> socket.close(AUTH_FAILED, "Authentication failed");
        case NOTHING ->
            CompletableFuture.delayedExecutor(AUTH_WINDOW.toMillis(), TimeUnit.MILLISECONDS)
                .execute(
                    () -> {
                      if (!closed.isDone() && authPending()) {
                        socket.close(AUTH_FAILED, "Authentication failed");
                      }
                    });
      }
    }

    private synchronized boolean authPending() {
      return auth == Presented.NOTHING;
    }

    @Override
    public void onText(WebSocket socket, String text) {
      if (authPending()) {
        firstMessage(socket, text);
        return;
      }
      if (auth != Presented.GOOD || !acceptsCommands) {
        return; // Paddock's event socket takes no frames from the client.
      }
      Object parsed;
      try {
        parsed = Json.parseAny(text.getBytes(StandardCharsets.UTF_8));
      } catch (RuntimeException e) {
        error(socket, 400, "a frame must be an ExecuteBashRequest JSON object");
        return;
      }
      if (parsed instanceof Map<?, ?> map && "auth".equals(map.get("type"))) {
        return; // A redundant auth frame: ignored, as OpenHands does.
      }
      try {
        JsonBody body = JsonBody.parse(text.getBytes(StandardCharsets.UTF_8), EXECUTE_FIELDS);
        service.start(requests.apply(body), Optional.empty());
      } catch (HttpError e) {
        error(socket, e.status(), e.getMessage());
      } catch (IllegalArgumentException e) {
        error(socket, 400, e.getMessage());
      }
    }

    /** The first message of a socket that did not authenticate on the upgrade. */
    private void firstMessage(WebSocket socket, String text) {
      boolean good = false;
      try {
        if (Json.parseAny(text.getBytes(StandardCharsets.UTF_8)) instanceof Map<?, ?> map
            && "auth".equals(map.get("type"))
            && map.get("session_api_key") instanceof String key) {
          good = keyAccepted.test(key);
        }
      } catch (RuntimeException e) {
        good = false; // Malformed JSON: not an auth frame.
      }
      synchronized (this) {
        auth = good ? Presented.GOOD : Presented.BAD;
      }
      if (good) {
        follow(socket);
      } else {
        socket.close(AUTH_FAILED, "Authentication failed");
      }
    }

    private void error(WebSocket socket, int code, String detail) {
      Map<String, Object> frame = new LinkedHashMap<>();
      frame.put("kind", "BashError");
      frame.put("code", code);
      frame.put("detail", detail);
      try {
        socket.sendText(Json.string(frame));
      } catch (java.io.IOException e) {
        // The socket closed meanwhile; the reader sees the close.
      }
    }

    private void follow(WebSocket socket) {
      Thread.ofVirtual()
          .name("paddock-event-socket")
          .start(
              () -> {
                activity.started();
                try {
                  service
                      .feed()
                      .follow(
                          after,
                          reportGaps,
                          filter,
                          endsAfter,
                          finished.isDone() ? finished : CompletableFuture.anyOf(finished, closed),
                          format,
                          frame -> socket.sendText(new String(frame, StandardCharsets.UTF_8)));
                  if (!closed.isDone()) {
                    socket.close(1000, "end of stream");
                  }
                } catch (java.io.IOException e) {
                  socket.close(1011, "cannot send");
                } catch (InterruptedException e) {
                  socket.close(1001, "agent stopping");
                } finally {
                  activity.ended();
                }
              });
    }

    @Override
    public void onClose(WebSocket socket, int code, String reason) {
      closed.complete(null);
      if (counted) {
        count.decrementAndGet();
      }
    }
  }
}
