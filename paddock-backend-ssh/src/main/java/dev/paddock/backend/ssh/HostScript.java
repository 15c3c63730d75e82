package dev.paddock.backend.ssh;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The host half of the backend, {@code paddock-host.sh}, sent with each call as {@code bash -c
 * <script> paddock-host <dir> <operation> <args>} so a host never runs a stale copy and nothing has
 * to be installed on it but bash. Arguments are single-quoted for the login shell; secrets never go
 * into a command line (they travel on standard input).
 */
final class HostScript {
  /** The script's own failures: {@code paddock-host: <class>: <detail>}. */
  private static final Pattern FAILURE =
      Pattern.compile("paddock-host: ([a-z-]+): (.*)", Pattern.DOTALL);

  private static final String SCRIPT = load();

  private HostScript() {}

  /** The command line running {@code operation} with {@code args} in {@code remoteDir}. */
  static String command(String remoteDir, String operation, String... args) {
    List<String> words =
        new ArrayList<>(List.of("bash", "-c", SCRIPT, "paddock-host", remoteDir, operation));
    words.addAll(List.of(args));
    return String.join(" ", words.stream().map(HostScript::quote).toList());
  }

  /** {@code word} single-quoted for a POSIX shell. */
  static String quote(String word) {
    return "'" + word.replace("'", "'\\''") + "'";
  }

  /**
   * The script's classified failure in {@code stderr}, if it reported one.
   *
   * @return the class ({@code unsuitable}, {@code disk-full}, {@code exists}, {@code missing},
   *     {@code exited}, {@code never-ready}, {@code invalid}) and the detail
   */
  static Optional<Map.Entry<String, String>> failure(String stderr) {
    int at = stderr.lastIndexOf("paddock-host: ");
    if (at < 0) {
      return Optional.empty();
    }
    Matcher m = FAILURE.matcher(stderr.substring(at).strip());
    return m.matches() ? Optional.of(Map.entry(m.group(1), m.group(2))) : Optional.empty();
  }

  /** {@code key=value} lines (the last value of a key wins). */
  static Map<String, String> keyValues(String text) {
    Map<String, String> values = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        values.put(line.substring(0, eq).strip(), line.substring(eq + 1).strip());
      }
    }
    return values;
  }

  /** The records of {@code list}, each a marker plus its {@code state}. */
  static List<Map<String, String>> records(String text) {
    List<Map<String, String>> records = new ArrayList<>();
    for (String block : text.split("(?m)^---$")) {
      Map<String, String> record = keyValues(block);
      if (!record.isEmpty()) {
        records.add(record);
      }
    }
    return records;
  }

  private static String load() {
    try (InputStream in = HostScript.class.getResourceAsStream("paddock-host.sh")) {
      if (in == null) {
        throw new IllegalStateException("paddock-host.sh is missing from the class path");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
