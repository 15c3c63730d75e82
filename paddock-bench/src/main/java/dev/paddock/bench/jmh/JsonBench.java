package dev.paddock.bench.jmh;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.paddock.http.Json;
import dev.paddock.http.JsonBody;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The agent's JSON on its hot paths: writing a small reply ({@code /alive}, the exit line of a
 * stream), writing one 64 KiB stdout line of a stream, and parsing a command request with {@link
 * JsonBody#parse}. Each is next to a baseline: turning the already-written text into bytes (the
 * floor of producing the reply), and walking the request's tokens without building anything.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class JsonBench {
  private static final Set<String> EXECUTE_FIELDS =
      Set.of("command", "cwd", "timeout", "session", "env");
  private static final JsonFactory FACTORY = new JsonFactory();

  private Map<String, Object> alive;
  private String aliveText;
  private Map<String, Object> exitLine;
  private String exitLineText;
  private Map<String, Object> stdoutLine;
  private String stdoutLineText;
  private byte[] request;
  private byte[] stdoutBytes;
  private byte[] mixedBytes;
  private final dev.paddock.http.JsonText text = new dev.paddock.http.JsonText();

  @Setup
  public void setUp() {
    alive = Map.of("status", "ok");
    aliveText = Json.string(alive);
    exitLine = new LinkedHashMap<>();
    exitLine.put("type", "exit");
    exitLine.put("exit_code", 0);
    exitLine.put("timed_out", false);
    exitLine.put("stdout_truncated", false);
    exitLine.put("stderr_truncated", false);
    exitLine.put("duration_ms", 3);
    exitLineText = Json.string(exitLine);
    // Pumps read 64 KiB at a time, so a busy stream is made of lines like this one.
    stdoutLine = Map.of("type", "stdout", "data", "a".repeat(64 << 10));
    stdoutLineText = Json.string(stdoutLine);
    stdoutBytes = "a".repeat(64 << 10).getBytes(StandardCharsets.UTF_8);
    // Source-code-like output: quotes, backslashes, tabs, newlines and some non-ASCII.
    mixedBytes =
        "\tif (x == \"é\\n\") { return 'ü'; }\n"
            .repeat((64 << 10) / 32)
            .getBytes(StandardCharsets.UTF_8);
    request =
        "{\"command\":\"ls -la /tmp\",\"cwd\":\"/workspace\",\"timeout\":30,\"session\":\"bench\"}"
            .getBytes(StandardCharsets.UTF_8);
  }

  @Benchmark
  public byte[] writeAliveReply() {
    return Json.bytes(alive);
  }

  @Benchmark
  public byte[] baselineAliveTextToBytes() {
    return aliveText.getBytes(StandardCharsets.UTF_8);
  }

  @Benchmark
  public byte[] writeExitLine() {
    return Json.bytes(exitLine);
  }

  @Benchmark
  public byte[] baselineExitLineTextToBytes() {
    return exitLineText.getBytes(StandardCharsets.UTF_8);
  }

  @Benchmark
  public byte[] writeStdoutLine64k() {
    return Json.bytes(stdoutLine);
  }

  /** What the stream route does now: escape the pump's bytes straight into a reused buffer. */
  @Benchmark
  public int escapeStdoutLine64k() {
    text.reset();
    text.raw("{\"type\":\"stdout\",\"data\":\"").escaped(stdoutBytes, 0, stdoutBytes.length);
    return text.raw("\"}\n").size();
  }

  @Benchmark
  public int escapeMixedLine64k() {
    text.reset();
    text.raw("{\"type\":\"stdout\",\"data\":\"").escaped(mixedBytes, 0, mixedBytes.length);
    return text.raw("\"}\n").size();
  }

  /** The floor for the escapers: copying the 64 KiB once. */
  @Benchmark
  public byte[] baselineCopy64k() {
    return java.util.Arrays.copyOf(stdoutBytes, stdoutBytes.length);
  }

  @Benchmark
  public byte[] baselineStdoutLineTextToBytes() {
    return stdoutLineText.getBytes(StandardCharsets.UTF_8);
  }

  @Benchmark
  public void parseCommandRequest(Blackhole blackhole) {
    JsonBody body = JsonBody.parse(request, EXECUTE_FIELDS);
    blackhole.consume(body.requiredString("command"));
    blackhole.consume(body.optionalString("cwd"));
    blackhole.consume(body.optionalLong("timeout", 1, 3600));
    blackhole.consume(body.optionalString("session"));
  }

  @Benchmark
  public int baselineTokenScan() throws IOException {
    int tokens = 0;
    try (JsonParser parser = FACTORY.createParser(request)) {
      for (JsonToken t = parser.nextToken(); t != null; t = parser.nextToken()) {
        tokens++;
      }
    }
    return tokens;
  }
}
