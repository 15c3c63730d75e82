package dev.paddock.agent.bash;

import dev.paddock.http.Call;
import dev.paddock.http.Json;
import dev.paddock.http.JsonText;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes one NDJSON line per output chunk straight from the pump threads. Lines made before {@link
 * #begin} (the command starts before its start line goes out) wait in {@code early}.
 */
final class NdjsonStream implements OutputListener {
  private final Call call;
  private static final byte[] NO_BYTES = new byte[0];
  private OutputStream out;
  private final List<byte[]> early = new ArrayList<>();
  private final byte[][] carry = {NO_BYTES, NO_BYTES};
  private final JsonText text = new JsonText();

  NdjsonStream(Call call) {
    this.call = call;
  }

  @Override
  public synchronized void begin(String commandId) throws IOException {
    out = call.stream(200, "application/x-ndjson", 0);
    out.write(lineBytes(Map.of("type", "start", "command_id", commandId)));
    for (byte[] line : early) {
      out.write(line);
    }
    early.clear();
    out.flush();
  }

  @Override
  public synchronized void output(Channel channel, byte[] data, int offset, int length)
      throws IOException {
    byte[] previous = carry[channel.ordinal()];
    byte[] bytes = data;
    int from = offset;
    int count = length;
    if (previous.length > 0) {
      bytes = new byte[previous.length + length];
      System.arraycopy(previous, 0, bytes, 0, previous.length);
      System.arraycopy(data, offset, bytes, previous.length, length);
      from = 0;
      count = bytes.length;
    }
    int tail = Utf8.incompleteTail(bytes, from, count);
    carry[channel.ordinal()] =
        tail == 0 ? NO_BYTES : Arrays.copyOfRange(bytes, from + count - tail, from + count);
    if (count - tail > 0) {
      dataLine(channel, bytes, from, count - tail);
    }
  }

  /** One {@code stdout}/{@code stderr} line, escaped byte by byte (the streaming hot path). */
  private void dataLine(Channel channel, byte[] bytes, int from, int count) throws IOException {
    text.reset();
    text.raw(
        channel == Channel.STDOUT
            ? "{\"type\":\"stdout\",\"data\":\""
            : "{\"type\":\"stderr\",\"data\":\"");
    text.escaped(bytes, from, count).raw("\"}\n");
    if (out == null) {
      early.add(Arrays.copyOf(text.array(), text.size()));
      return;
    }
    out.write(text.array(), 0, text.size());
    out.flush();
  }

  @Override
  public synchronized void finished(CommandResult result) throws IOException {
    for (Channel channel : Channel.values()) {
      byte[] rest = carry[channel.ordinal()];
      if (rest.length > 0) {
        dataLine(channel, rest, 0, rest.length);
      }
    }
    Map<String, Object> exit = new LinkedHashMap<>();
    exit.put("type", "exit");
    exit.put("exit_code", result.exitCode());
    exit.put("timed_out", result.timedOut());
    exit.put("oom_killed", result.oomKilled());
    exit.put("stdout_truncated", result.stdoutTruncated());
    exit.put("stderr_truncated", result.stderrTruncated());
    result.error().ifPresent(e -> exit.put("error", e));
    if (result.sessionReset()) {
      exit.put("session_reset", true);
    }
    exit.put("duration_ms", result.durationMillis());
    line(exit);
  }

  private void line(Map<String, Object> value) throws IOException {
    if (out == null) {
      early.add(lineBytes(value));
      return;
    }
    out.write(lineBytes(value));
    out.flush();
  }

  private static byte[] lineBytes(Map<String, Object> value) {
    byte[] json = Json.bytes(value);
    byte[] line = java.util.Arrays.copyOf(json, json.length + 1);
    line[json.length] = '\n';
    return line;
  }

  void awaitEnd(CommandRecord record) throws IOException, InterruptedException {
    BashRoutes.await(record);
    synchronized (this) {
      if (out != null) {
        out.close();
      }
    }
  }
}
