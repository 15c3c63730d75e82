package dev.paddock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time from Linux's {@code /proc}: of the whole machine (every core's user, nice and system
 * time) and of one process's own threads. In clock ticks of 10 ms ({@code USER_HZ} is 100 on every
 * Linux the project supports), so a figure needs a few hundred operations behind it.
 */
final class CpuClock {
  private static final double TICK_MS = 10;

  private CpuClock() {}

  /** Busy milliseconds of all cores since boot (user + nice + system + irq + softirq). */
  static double machineMillis() throws IOException {
    String cpu = Files.readAllLines(Path.of("/proc/stat")).get(0);
    String[] f = cpu.trim().split("\\s+"); // cpu user nice system idle iowait irq softirq ...
    long busy =
        Long.parseLong(f[1])
            + Long.parseLong(f[2])
            + Long.parseLong(f[3])
            + Long.parseLong(f[6])
            + Long.parseLong(f[7]);
    return busy * TICK_MS;
  }

  /** User + system milliseconds of process {@code pid}'s threads (not its children's). */
  static double processMillis(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
    long ticks = 0;
    for (int i = 11; i <= 12; i++) { // utime, stime: fields 14 and 15 of proc_pid_stat(5)
      ticks += Long.parseLong(f[i]);
    }
    return ticks * TICK_MS;
  }
}
