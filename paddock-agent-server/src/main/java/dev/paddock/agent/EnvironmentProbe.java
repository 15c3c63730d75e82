package dev.paddock.agent;

import dev.paddock.agent.bash.BashService;
import dev.paddock.http.Call;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code GET /api/environment}: what the sandbox runs on, for archive manifests. The OS is {@code
 * PRETTY_NAME} from {@code /etc/os-release}; runtimes are the versions of a fixed list of tools
 * found on the commands' {@code PATH}, asked by one fixed bash script (no request input reaches it)
 * with the commands' scrubbed environment, killed after {@link #TIMEOUT}. Read-only and opened to
 * the admin key as the archive route is.
 */
final class EnvironmentProbe {
  static final String ROUTE = "/api/environment";
  static final Duration TIMEOUT = Duration.ofSeconds(5);
  private static final int MAX_VALUE_CHARS = 200;
  private static final Pattern VERSION = Pattern.compile("\\d+(?:\\.\\d+)+[0-9A-Za-z.+_-]*");

  // One line "tool<TAB>first line of its version output" per tool found.
  private static final String SCRIPT =
      """
      for t in python3 python node npm java go ruby rustc cargo gcc git; do
        command -v "$t" >/dev/null 2>&1 || continue
        case "$t" in
          go) v=$(go version 2>&1) ;;
          java) v=$(java -version 2>&1) ;;
          *) v=$("$t" --version 2>&1) ;;
        esac
        printf '%s\\t%s\\n' "$t" "$(printf '%s\\n' "$v" | head -n 1)"
      done
      """;

  private final Path workspace;

  EnvironmentProbe(Path workspace) {
    this.workspace = workspace;
  }

  void handle(Call call) throws IOException {
    Map<String, Object> reply = new LinkedHashMap<>();
    reply.put("os", osName(Path.of("/etc/os-release")).orElse(null));
    reply.put("runtimes", runtimes());
    call.sendJson(200, reply);
  }

  static Optional<String> osName(Path osRelease) {
    try {
      for (String line : Files.readAllLines(osRelease)) {
        if (line.startsWith("PRETTY_NAME=")) {
          return Optional.of(cap(unquote(line.substring("PRETTY_NAME=".length()))));
        }
      }
    } catch (IOException e) {
      // No os-release (a minimal image): the OS is simply not reported.
    }
    return Optional.empty();
  }

  private static String unquote(String value) {
    String v = value.trim();
    if (v.length() >= 2 && (v.startsWith("\"") || v.startsWith("'"))) {
      v = v.substring(1, v.length() - 1);
    }
    return v;
  }

  private Map<String, String> runtimes() throws IOException {
    ProcessBuilder builder =
        new ProcessBuilder("bash", "-c", SCRIPT)
            .directory(workspace.toFile())
            .redirectErrorStream(true);
    builder.environment().clear();
    builder.environment().putAll(BashService.commandEnvironment(System.getenv()));
    Process process = builder.start();
    process.getOutputStream().close();
    try {
      if (!process.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        return Map.of(); // what was found in time is not worth a partial answer
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      throw new IOException("interrupted while probing the environment", e);
    }
    try (InputStream out = process.getInputStream()) {
      return parse(new String(out.readNBytes(64 * 1024), StandardCharsets.UTF_8));
    }
  }

  /** {@code tool<TAB>line} lines to {@code tool -> version} (the line itself when it has none). */
  static Map<String, String> parse(String output) {
    Map<String, String> runtimes = new TreeMap<>();
    for (String line : List.of(output.split("\n"))) {
      int tab = line.indexOf('\t');
      if (tab <= 0) {
        continue;
      }
      String text = line.substring(tab + 1).trim();
      Matcher version = VERSION.matcher(text);
      runtimes.put(line.substring(0, tab), cap(version.find() ? version.group() : text));
    }
    return runtimes;
  }

  private static String cap(String value) {
    return value.length() <= MAX_VALUE_CHARS ? value : value.substring(0, MAX_VALUE_CHARS);
  }
}
