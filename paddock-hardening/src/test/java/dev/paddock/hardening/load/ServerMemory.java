package dev.paddock.hardening.load;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The control plane's memory as the operating system and its JVM see it: resident set size from
 * {@code /proc/<pid>/status}, and the live heap after a full GC ({@code jcmd GC.run}, then {@code
 * jstat -gc}: survivor, eden and old space in use). The server exposes no heap figure of its own
 * ({@code /metrics} carries Paddock's series only), so the JDK's tools read it, as the gateway
 * bench does.
 */
final class ServerMemory {
  /** One reading, in KiB. */
  record Sample(long rssKib, long heapAfterGcKib) {}

  private final long pid;

  ServerMemory(long pid) {
    this.pid = pid;
  }

  Sample sample() throws IOException, InterruptedException {
    run("jcmd", Long.toString(pid), "GC.run");
    return new Sample(rssKib(), heapKib());
  }

  long rssKib() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IllegalStateException("no VmRSS in /proc/" + pid + "/status");
  }

  private long heapKib() throws IOException, InterruptedException {
    List<String> lines = run("jstat", "-gc", Long.toString(pid)).lines().toList();
    List<String> names = Arrays.asList(lines.get(0).trim().split("\\s+"));
    String[] values = lines.get(1).trim().split("\\s+");
    double used = 0;
    for (String column : List.of("S0U", "S1U", "EU", "OU")) {
      used += Double.parseDouble(values[names.indexOf(column)]);
    }
    return Math.round(used);
  }

  private static String run(String tool, String... args) throws IOException, InterruptedException {
    List<String> argv = new java.util.ArrayList<>();
    argv.add(Path.of(System.getProperty("java.home"), "bin", tool).toString());
    argv.addAll(List.of(args));
    Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
    byte[] out = process.getInputStream().readAllBytes();
    if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
      process.destroyForcibly();
      throw new IOException(tool + " failed: " + new String(out, StandardCharsets.UTF_8));
    }
    return new String(out, StandardCharsets.UTF_8);
  }
}
