package dev.paddock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Resident set size of a Linux process, read from {@code /proc/PID/status}. */
final class Rss {
  private Rss() {}

  /** VmRSS of {@code pid} in MiB. */
  static double ofPid(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
      if (line.startsWith("VmRSS:")) {
        String kib = line.substring("VmRSS:".length()).replace("kB", "").strip();
        return Long.parseLong(kib) / 1024.0;
      }
    }
    throw new IOException("no VmRSS line in /proc/" + pid + "/status (is the process gone?)");
  }
}
