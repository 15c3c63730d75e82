package dev.paddock.agent.bash;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.Json;
import dev.paddock.http.JsonBody;
import dev.paddock.http.Router;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Predicate;

/**
 * HTTP routes for commands: the OpenHands {@code /api/bash} routes, and Paddock's streaming exec,
 * stdin, signals and sessions beside them.
 */
public final class BashRoutes {
  private static final Set<String> EXECUTE_FIELDS =
      Set.of("command", "cwd", "timeout", "session", "env");
  private static final Set<String> START_FIELDS =
      Set.of("command", "cwd", "timeout", "session", "env", "stdin");
  private static final Set<String> SEARCH_PARAMS =
      Set.of(
          "kind__eq",
          "command_id__eq",
          "timestamp__gte",
          "timestamp__lt",
          "order__gt",
          "sort_order",
          "page_id",
          "limit");
  private static final long MAX_TIMEOUT_SECONDS = 7 * 24 * 3600;

  private final BashService service;
  private final long defaultTimeoutSeconds;

  private BashRoutes(BashService service, long defaultTimeoutSeconds) {
    this.service = service;
    this.defaultTimeoutSeconds = defaultTimeoutSeconds;
  }

  public static void register(Router router, BashService service, long defaultTimeoutSeconds) {
    BashRoutes routes = new BashRoutes(service, defaultTimeoutSeconds);
    router
        .add("POST", "/api/bash/execute_bash_command", routes::execute)
        .add("POST", "/api/bash/start_bash_command", routes::startCommand)
        .add("POST", "/api/bash/stream", routes::stream)
        .add("GET", "/api/bash/events", routes::events)
        .add("GET", "/api/bash/bash_events/search", routes::search)
        .add("GET", "/api/bash/bash_events/{event_id}", routes::getEvent)
        .add("GET", "/api/bash/bash_events", routes::batchGet)
        .add("DELETE", "/api/bash/bash_events", routes::clear)
        .add("GET", "/api/bash/commands", routes::listRunning)
        .add("GET", "/api/bash/commands/{command_id}", routes::commandStatus)
        .add("POST", "/api/bash/commands/{command_id}/stdin", routes::stdin)
        .add("POST", "/api/bash/commands/{command_id}/signal", routes::signal)
        .add("GET", "/api/sessions", routes::listSessions)
        .add("POST", "/api/sessions", routes::createSession)
        .add("GET", "/api/sessions/{name}", routes::getSession)
        .add("DELETE", "/api/sessions/{name}", routes::deleteSession);
  }

  /**
   * Registers the WebSocket routes ({@code /sockets/bash-events}, {@code /sockets/events}); see
   * {@link EventSockets}. They authenticate themselves: {@code keyAccepted} checks a session key,
   * {@code open} says the agent has none; {@code activity} is told while an authenticated socket
   * follows the events (outside the router's protected prefixes, so the router cannot tell).
   */
  public static void registerSockets(
      Router router,
      BashService service,
      long defaultTimeoutSeconds,
      boolean open,
      java.util.function.Predicate<String> keyAccepted,
      dev.paddock.http.ActivityListener activity) {
    BashRoutes routes = new BashRoutes(service, defaultTimeoutSeconds);
    EventSockets sockets = new EventSockets(service, routes::request, open, keyAccepted, activity);
    router
        .websocket("/sockets/bash-events", sockets::bashEvents)
        .websocket("/sockets/events", sockets::events);
  }

  CommandRequest request(JsonBody body) {
    String command = body.requiredString("command");
    if (command.isBlank()) {
      throw HttpError.unprocessable("field 'command' must not be blank");
    }
    Optional<String> session = body.optionalString("session");
    if (session.isPresent() && !BashService.validSessionName(session.get())) {
      throw HttpError.unprocessable(BashService.SESSION_NAME_RULE);
    }
    return new CommandRequest(
        command,
        body.optionalString("cwd"),
        body.optionalLong("timeout", 1, MAX_TIMEOUT_SECONDS).orElse(defaultTimeoutSeconds),
        session,
        body.optionalBoolean("stdin").orElse(false),
        environment(body));
  }

  /** Extra variables; names and values a process environment cannot hold are refused. */
  private static Map<String, String> environment(JsonBody body) {
    Map<String, String> env = body.optionalStringMap("env").orElse(Map.of());
    env.forEach(
        (name, value) -> {
          if (name.isEmpty() || name.indexOf('=') >= 0 || name.indexOf('\0') >= 0) {
            throw HttpError.unprocessable(
                "field 'env' has an invalid variable name '" + name + "' (empty, '=' or NUL)");
          }
          if (value.indexOf('\0') >= 0) {
            throw HttpError.unprocessable(
                "field 'env' variable '" + name + "' has a NUL character in its value");
          }
        });
    return env;
  }

  private CommandRecord start(CommandRequest request, Optional<OutputListener> listener) {
    return start(request, listener, false);
  }

  private CommandRecord start(
      CommandRequest request, Optional<OutputListener> listener, boolean pinned) {
    try {
      return service.start(request, listener, pinned);
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest(e.getMessage());
    }
  }

  private void execute(Call call) throws Exception {
    // Pinned: retention may drop the command as soon as it ends, but its output is read below.
    CommandRecord record = start(request(call.jsonBody(EXECUTE_FIELDS)), Optional.empty(), true);
    try {
      writeResult(call, record, await(record), service.replyCapBytes());
    } finally {
      service.unpin(record);
    }
  }

  /**
   * The reply of {@code execute_bash_command}: the whole output up to {@code cap} bytes per stream
   * (the events keep more), flagged truncated beyond.
   */
  private static void writeResult(Call call, CommandRecord record, CommandResult outcome, long cap)
      throws IOException {
    CommandRecord.Range stdout = record.head(Channel.STDOUT, cap);
    CommandRecord.Range stderr = record.head(Channel.STDERR, cap);
    CommandResult result =
        new CommandResult(
            outcome.exitCode(),
            outcome.timedOut(),
            outcome.stdoutTruncated() || stdout.length() < record.bytesKept(Channel.STDOUT),
            outcome.stderrTruncated() || stderr.length() < record.bytesKept(Channel.STDERR),
            outcome.error(),
            outcome.sessionReset(),
            outcome.durationMillis(),
            outcome.oomKilled());
    try (OutputStream out = call.stream(200, "application/json", 0);
        JsonGenerator g = Json.generator(out)) {
      List<BashEvent> events = record.events();
      BashEvent last = events.isEmpty() ? null : events.get(events.size() - 1);
      g.writeStartObject();
      g.writeStringField("kind", "BashOutput");
      g.writeStringField("id", last != null ? last.id() : record.id);
      g.writeStringField(
          "timestamp", BashEvent.TIMESTAMP.format(last != null ? last.timestamp() : Instant.now()));
      g.writeStringField("command_id", record.id);
      g.writeNumberField("order", last instanceof BashEvent.Output o ? o.order() : 0);
      g.writeNumberField("exit_code", result.exitCode());
      g.writeFieldName("stdout");
      record.writeText(g, Channel.STDOUT, stdout);
      g.writeFieldName("stderr");
      record.writeText(g, Channel.STDERR, stderr);
      BashEvents.writeOutcomeFields(g, result);
      g.writeEndObject();
    }
  }

  static CommandResult await(CommandRecord record) throws InterruptedException {
    try {
      return record.result.get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("command " + record.id + " failed", e.getCause());
    }
  }

  private void startCommand(Call call) throws Exception {
    CommandRecord record = start(request(call.jsonBody(START_FIELDS)), Optional.empty());
    writeEvent(call, new BashEvent.Command(record));
  }

  /**
   * Streaming exec: one NDJSON line per event, in order, as output happens: {@code start}, then
   * {@code stdout}/{@code stderr} chunks (whole UTF-8 characters), then {@code exit}.
   */
  private void stream(Call call) throws Exception {
    CommandRequest request = request(call.jsonBody(START_FIELDS));
    NdjsonStream lines = new NdjsonStream(call);
    CommandRecord record = start(request, Optional.of(lines));
    lines.awaitEnd(record);
  }

  /**
   * Paddock's event stream, NDJSON: every event after {@code from_order} (default -1: all that is
   * retained), then live, each exactly once (see {@link EventFeed}); with {@code command_id} only
   * that command's events, ending after its last.
   */
  private void events(Call call) throws Exception {
    call.allowQuery(Set.of("from_order", "command_id"));
    long from = call.queryInt("from_order", -1, Integer.MAX_VALUE).orElse(-1);
    Optional<CommandRecord> record = call.query("command_id").map(id -> commandById(id));
    OutputStream out = call.stream(200, "application/x-ndjson", 0);
    service
        .feed()
        .follow(
            from,
            from >= 0,
            e -> record.map(r -> e.command() == r).orElse(true),
            e -> record.isPresent() && e instanceof BashEvent.Output o && o.last(),
            record.<CompletableFuture<?>>map(r -> r.result).orElseGet(CompletableFuture::new),
            EventFeed.Format.PADDOCK,
            frame -> {
              out.write(frame);
              out.write('\n');
              out.flush();
            });
    out.close();
  }

  private CommandRecord commandById(String id) {
    return service.command(id).orElseThrow(() -> HttpError.notFound("no command with id " + id));
  }

  private void search(Call call) throws IOException {
    call.allowQuery(SEARCH_PARAMS);
    Optional<String> kind = call.query("kind__eq");
    if (kind.isPresent() && !Set.of("BashCommand", "BashOutput").contains(kind.get())) {
      throw HttpError.unprocessable("kind__eq must be BashCommand or BashOutput");
    }
    Optional<String> commandId = call.query("command_id__eq");
    Optional<Instant> from = call.query("timestamp__gte").map(BashRoutes::instant);
    Optional<Instant> until = call.query("timestamp__lt").map(BashRoutes::instant);
    Optional<Integer> orderAbove = call.queryInt("order__gt", -1, Integer.MAX_VALUE);
    String sort = call.query("sort_order").orElse("TIMESTAMP");
    if (!sort.equals("TIMESTAMP") && !sort.equals("TIMESTAMP_DESC")) {
      throw HttpError.unprocessable("sort_order must be TIMESTAMP or TIMESTAMP_DESC");
    }
    int limit = call.queryInt("limit", 1, 100).orElse(100);
    Predicate<BashEvent> filter =
        e ->
            kind.map(k -> k.equals(e.kind())).orElse(true)
                && commandId.map(id -> id.equals(e.command().id)).orElse(true)
                && from.map(t -> !e.timestamp().isBefore(t)).orElse(true)
                && until.map(t -> e.timestamp().isBefore(t)).orElse(true)
                && orderAbove
                    .map(o -> !(e instanceof BashEvent.Output out) || out.order() > o)
                    .orElse(true);
    EventLog.Page page =
        service.search(filter, sort.equals("TIMESTAMP_DESC"), call.query("page_id"), limit);
    try (OutputStream out = call.stream(200, "application/json", 0);
        JsonGenerator g = Json.generator(out)) {
      g.writeStartObject();
      g.writeArrayFieldStart("items");
      for (BashEvent event : page.items()) {
        event.write(g);
      }
      g.writeEndArray();
      if (page.nextPageId().isPresent()) {
        g.writeStringField("next_page_id", page.nextPageId().get());
      } else {
        g.writeNullField("next_page_id");
      }
      g.writeEndObject();
    }
  }

  private static Instant instant(String text) {
    try {
      return OffsetDateTime.parse(text).toInstant();
    } catch (DateTimeParseException e) {
      try {
        return LocalDateTime.parse(text).toInstant(ZoneOffset.UTC);
      } catch (DateTimeParseException e2) {
        throw HttpError.unprocessable("not an ISO-8601 timestamp: '" + text + "'");
      }
    }
  }

  private void getEvent(Call call) throws IOException {
    String id = call.pathParam("event_id");
    BashEvent event =
        service.event(id).orElseThrow(() -> HttpError.notFound("no bash event with id " + id));
    writeEvent(call, event);
  }

  /** OpenHands reads {@code event_ids} from a JSON body on this GET; the query form works too. */
  private void batchGet(Call call) throws IOException {
    List<String> ids = new ArrayList<>(call.queryAll("event_ids"));
    byte[] body = call.smallBody();
    if (body.length > 0) {
      Object parsed = Json.parseAny(body);
      if (!(parsed instanceof List<?> list) || !list.stream().allMatch(String.class::isInstance)) {
        throw HttpError.unprocessable("body must be a JSON list of event id strings");
      }
      list.forEach(id -> ids.add((String) id));
    }
    if (ids.size() > 100) {
      throw HttpError.unprocessable("at most 100 event ids per request");
    }
    try (OutputStream out = call.stream(200, "application/json", 0);
        JsonGenerator g = Json.generator(out)) {
      g.writeStartArray();
      for (String id : ids) {
        Optional<BashEvent> event = service.event(id);
        if (event.isPresent()) {
          event.get().write(g);
        } else {
          g.writeNull();
        }
      }
      g.writeEndArray();
    }
  }

  private void clear(Call call) throws IOException {
    call.sendJson(200, Map.of("cleared_count", service.clearHistory()));
  }

  private void listRunning(Call call) throws IOException {
    List<Map<String, Object>> items = new ArrayList<>();
    for (CommandRecord record : service.running()) {
      items.add(describe(record));
    }
    call.sendJson(200, Map.of("items", items));
  }

  private void commandStatus(Call call) throws IOException {
    call.sendJson(200, describe(command(call)));
  }

  private CommandRecord command(Call call) {
    String id = call.pathParam("command_id");
    return service.command(id).orElseThrow(() -> HttpError.notFound("no command with id " + id));
  }

  private static Map<String, Object> describe(CommandRecord record) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", record.id);
    m.put("command", record.command);
    m.put("timestamp", BashEvent.TIMESTAMP.format(record.timestamp));
    m.put("session", record.session.orElse(null));
    m.put("running", record.running());
    CommandResult result = record.result.getNow(null);
    m.put("exit_code", result == null ? null : result.exitCode());
    m.put("timed_out", result != null && result.timedOut());
    m.put("oom_killed", result != null && result.oomKilled());
    return m;
  }

  /** Streams the request body into the command's stdin; {@code ?eof=true} closes it after. */
  private void stdin(Call call) throws IOException {
    call.allowQuery(Set.of("eof"));
    CommandRecord record = command(call);
    boolean eof = call.queryBoolean("eof").orElse(false);
    CommandControl control = liveControl(record);
    long written = 0;
    try (InputStream in = call.body()) {
      byte[] buffer = new byte[16 << 10];
      int n;
      while ((n = in.read(buffer)) >= 0) {
        control.writeStdin(java.util.Arrays.copyOf(buffer, n));
        written += n;
      }
      if (eof) {
        control.closeStdin();
      }
    } catch (IllegalStateException e) {
      throw HttpError.conflict(e.getMessage());
    } catch (IOException e) {
      throw HttpError.conflict("stdin of command " + record.id + " is closed: " + e.getMessage());
    }
    call.sendJson(200, Map.of("written", written, "closed", eof));
  }

  private void signal(Call call) throws IOException {
    JsonBody body = call.jsonBody(Set.of("signal"));
    String name = body.requiredString("signal");
    String signal =
        ProcessTree.normaliseSignal(name)
            .orElseThrow(
                () ->
                    HttpError.unprocessable(
                        "unknown signal '"
                            + name
                            + "'; use e.g. INT, TERM, KILL, HUP, USR1, STOP, CONT"));
    CommandRecord record = command(call);
    liveControl(record).signal(signal);
    call.sendJson(200, Map.of("success", true, "signal", signal));
  }

  private static CommandControl liveControl(CommandRecord record) {
    if (!record.running()) {
      throw HttpError.conflict("command " + record.id + " has already finished");
    }
    return record
        .control()
        .orElseThrow(() -> HttpError.conflict("command " + record.id + " has not started yet"));
  }

  private void listSessions(Call call) throws IOException {
    List<Map<String, Object>> items = new ArrayList<>();
    for (BashService.ShellSessionInfo info : service.sessions()) {
      items.add(describe(info));
    }
    call.sendJson(200, Map.of("items", items));
  }

  private void createSession(Call call) throws IOException {
    String name = call.jsonBody(Set.of("name")).requiredString("name");
    try {
      call.sendJson(201, describe(service.openSession(name)));
    } catch (IllegalArgumentException e) {
      throw HttpError.unprocessable(e.getMessage());
    }
  }

  private void getSession(Call call) throws IOException {
    String name = call.pathParam("name");
    call.sendJson(
        200,
        describe(
            service
                .sessionInfo(name)
                .orElseThrow(() -> HttpError.notFound("no session named '" + name + "'"))));
  }

  private void deleteSession(Call call) throws IOException {
    String name = call.pathParam("name");
    if (!service.closeSession(name)) {
      throw HttpError.notFound("no session named '" + name + "'");
    }
    call.sendJson(200, Map.of("success", true));
  }

  private static Map<String, Object> describe(BashService.ShellSessionInfo info) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", info.name());
    m.put("created_at", BashEvent.TIMESTAMP.format(info.createdAt()));
    m.put("pid", info.pid().orElse(null));
    m.put("busy", info.busy());
    m.put("command_count", info.commandCount());
    return m;
  }

  private static void writeEvent(Call call, BashEvent event) throws IOException {
    try (OutputStream out = call.stream(200, "application/json", 0);
        JsonGenerator g = Json.generator(out)) {
      event.write(g);
    }
  }
}
