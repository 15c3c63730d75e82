package dev.paddock.agent.pty;

import dev.paddock.agent.core.Signal;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.JsonBody;
import dev.paddock.http.Router;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The terminal routes under {@code /api/terminals} (docs/API.md "Terminals"): REST to create, list,
 * inspect, resize, signal, type into, read and delete terminals, and a WebSocket to attach.
 */
public final class TerminalRoutes {
  static final String ROOT = "/api/terminals";

  private final TerminalService terminals;

  private TerminalRoutes(TerminalService terminals) {
    this.terminals = terminals;
  }

  public static void register(Router router, TerminalService terminals) {
    TerminalRoutes routes = new TerminalRoutes(terminals);
    router
        .add("POST", ROOT, routes::create)
        .add(
            "GET",
            ROOT,
            call ->
                call.sendJson(200, terminals.list().stream().map(TerminalInfo::toJson).toList()))
        .add(
            "GET",
            ROOT + "/{id}",
            call -> call.sendJson(200, routes.terminal(call).info().toJson()))
        .add("DELETE", ROOT + "/{id}", routes::delete)
        .add("POST", ROOT + "/{id}/resize", routes::resize)
        .add("POST", ROOT + "/{id}/signal", routes::signal)
        .add("POST", ROOT + "/{id}/input", routes::input)
        .add("GET", ROOT + "/{id}/output", routes::output)
        .websocket(
            ROOT + "/{id}/ws", call -> TerminalSocket.accept(routes.terminal(call), since(call)));
  }

  private Terminal terminal(Call call) {
    String id = call.pathParam("id");
    return terminals
        .terminal(id)
        .orElseThrow(() -> HttpError.notFound("no terminal with id '" + id + "'"));
  }

  private void create(Call call) throws IOException {
    JsonBody body = call.jsonBody(Set.of("command", "cwd", "env", "cols", "rows"));
    try {
      TerminalRequest request =
          new TerminalRequest(
              body.optionalString("command").filter(c -> !c.isBlank()),
              body.optionalString("cwd"),
              body.optionalStringMap("env").orElse(Map.of()),
              size(body, "cols", TerminalRequest.DEFAULT_COLS),
              size(body, "rows", TerminalRequest.DEFAULT_ROWS));
      call.sendJson(201, terminals.create(request).toJson());
    } catch (TerminalsUnavailableException e) {
      throw new HttpError(501, e.getMessage());
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest(e.getMessage());
    } catch (IllegalStateException e) {
      throw new HttpError(429, e.getMessage());
    } catch (IOException e) {
      // Opening the pty or starting the child failed (e.g. the kernel's pty limit): not the
      // client's connection, which the router would otherwise assume an IOException means.
      throw new HttpError(503, "cannot open a terminal: " + e.getMessage());
    }
  }

  private static int size(JsonBody body, String name, int orElse) {
    return body.optionalLong(name, 1, TerminalRequest.MAX_SIZE).map(Long::intValue).orElse(orElse);
  }

  private void delete(Call call) throws IOException, InterruptedException {
    String id = call.pathParam("id");
    TerminalInfo info =
        terminals
            .delete(id)
            .orElseThrow(() -> HttpError.notFound("no terminal with id '" + id + "'"));
    call.sendJson(200, info.toJson());
  }

  private void resize(Call call) throws IOException {
    Terminal terminal = terminal(call);
    JsonBody body = call.jsonBody(Set.of("cols", "rows"));
    int cols =
        body.optionalLong("cols", 1, TerminalRequest.MAX_SIZE)
            .orElseThrow(() -> HttpError.unprocessable("field 'cols' is required"))
            .intValue();
    int rows =
        body.optionalLong("rows", 1, TerminalRequest.MAX_SIZE)
            .orElseThrow(() -> HttpError.unprocessable("field 'rows' is required"))
            .intValue();
    try {
      terminal.resize(cols, rows);
    } catch (IOException e) {
      throw HttpError.conflict(e.getMessage());
    }
    call.sendJson(200, terminal.info().toJson());
  }

  private void signal(Call call) throws IOException {
    Terminal terminal = terminal(call);
    String name = call.jsonBody(Set.of("signal")).requiredString("signal");
    terminal.signal(signalNumber(name));
    call.sendJson(200, terminal.info().toJson());
  }

  static int signalNumber(String name) {
    return Signal.parse(name)
        .map(Signal::number)
        .orElseThrow(
            () ->
                HttpError.unprocessable("unknown signal '" + name + "'; one of " + Signal.names()));
  }

  /** The raw request body is typed into the terminal (bounded by the JSON body limit). */
  private void input(Call call) throws IOException {
    Terminal terminal = terminal(call);
    byte[] data = call.smallBody();
    try {
      terminal.input(data);
    } catch (IOException e) {
      throw HttpError.conflict(e.getMessage());
    }
    call.sendJson(200, Map.of("bytes", data.length, "output_offset", terminal.output.end()));
  }

  /**
   * The scrollback from {@code since} (default: the oldest byte held), as raw bytes; headers give
   * the offset of the first byte sent, the offset to ask for next, and how many bytes were lost.
   */
  private void output(Call call) throws IOException {
    call.allowQuery(Set.of("since"));
    Terminal terminal = terminal(call);
    byte[] buffer = new byte[TerminalService.SCROLLBACK_BYTES];
    Scrollback.Slice slice = terminal.output.read(since(call).orElse(0L), buffer);
    call.setHeader("X-Paddock-Output-Offset", Long.toString(slice.from()));
    call.setHeader("X-Paddock-Output-Next", Long.toString(slice.next()));
    call.setHeader("X-Paddock-Output-Skipped", Long.toString(slice.skipped()));
    call.setHeader("Content-Type", "application/octet-stream");
    call.send(200, java.util.Arrays.copyOf(buffer, slice.length()));
  }

  static Optional<Long> since(Call call) {
    return call.query("since")
        .map(
            raw -> {
              try {
                long value = Long.parseLong(raw.trim());
                if (value >= 0) {
                  return value;
                }
              } catch (NumberFormatException e) {
                // Answered below.
              }
              throw HttpError.unprocessable(
                  "query parameter 'since' must be a byte offset (0 or more), got '" + raw + "'");
            });
  }
}
