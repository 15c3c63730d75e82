package dev.paddock.cli;

import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxFilter;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStats;
import dev.paddock.api.SandboxStatus;
import dev.paddock.client.PaddockClient;
import dev.paddock.client.PaddockClientException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code paddock sandbox top} and {@code paddock sandbox logs}. */
final class UsageCommands {
  private UsageCommands() {}

  @Command(
      mixinStandardHelpOptions = true,
      name = "top",
      description = {
        "Show running sandboxes' resource use, refreshed like docker stats (Ctrl-C to stop).",
        "A value the backend cannot read shows as '-'."
      })
  static final class Top implements Callable<Integer> {
    @Mixin Connection connection;

    @Parameters(paramLabel = "ID", arity = "0..*", description = "sandboxes (default: all RUNNING)")
    List<String> ids = new ArrayList<>();

    @Option(names = "--no-stream", description = "print one table and exit")
    boolean noStream;

    @Option(
        names = "--interval",
        paramLabel = "SECONDS",
        description = "seconds between refreshes (default ${DEFAULT-VALUE})",
        defaultValue = "2")
    double interval;

    @Override
    public Integer call() throws InterruptedException {
      if (interval < 0.2) {
        throw new IllegalArgumentException("--interval must be at least 0.2 seconds");
      }
      PaddockClient client = connection.client();
      long every = (long) (interval * 1e9);
      if (noStream) {
        // Two readings a second apart, so the server can say what the CPU does now.
        read(client);
        TimeUnit.SECONDS.sleep(1);
        print(System.out, read(client));
        return 0;
      }
      while (!Thread.currentThread().isInterrupted()) {
        List<SandboxStats> readings = read(client);
        System.out.print("\033[H\033[2J"); // home and clear, as top does
        print(System.out, readings);
        System.out.flush();
        TimeUnit.NANOSECONDS.sleep(every);
      }
      return 0;
    }

    private List<SandboxStats> read(PaddockClient client) {
      List<SandboxStats> readings = new ArrayList<>();
      for (String id : ids.isEmpty() ? running(client) : ids) {
        try {
          readings.add(client.stats(id));
        } catch (PaddockClientException e) {
          if (!ids.isEmpty() || (e.status() != 404 && e.status() != 409)) {
            throw e; // a named sandbox that is not running is an error; a listed one just ended
          }
        }
      }
      return readings;
    }

    private static List<String> running(PaddockClient client) {
      SandboxFilter filter =
          new SandboxFilter(EnumSet.of(SandboxStatus.RUNNING), Map.of(), Optional.empty());
      List<String> ids = new ArrayList<>();
      Optional<String> pageId = Optional.empty();
      do {
        var page = client.list(filter, new PageRequest(pageId, PageRequest.MAX_LIMIT));
        page.items().stream().map(SandboxInfo::id).forEach(ids::add);
        pageId = page.nextPageId();
      } while (pageId.isPresent());
      return ids;
    }

    private void print(PrintStream out, List<SandboxStats> readings) {
      if (connection.json) {
        Printer.printJson(out, readings.stream().map(UsageCommands::json).toList());
        return;
      }
      String format = "%-26s %7s %10s %10s %10s %6s %10s %10s %10s%n";
      out.printf(
          format, "ID", "CPU %", "CPU TIME", "MEM", "MEM PEAK", "PIDS", "DISK", "NET RX", "NET TX");
      for (SandboxStats s : readings) {
        out.printf(
            format,
            s.sandboxId(),
            decimal(s.cpuPercent(), "%.1f"),
            decimal(s.cpuSeconds(), "%.2fs"),
            bytes(s.memoryBytes()),
            bytes(s.memoryPeakBytes()),
            s.pids().isPresent() ? Long.toString(s.pids().getAsLong()) : "-",
            bytes(s.diskBytes()),
            bytes(s.networkRxBytes()),
            bytes(s.networkTxBytes()));
      }
    }
  }

  static Map<String, Object> json(SandboxStats s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("sandbox_id", s.sandboxId());
    m.put("read_at", s.readAt().toString());
    s.cpuSeconds().ifPresent(v -> m.put("cpu_seconds", v));
    s.cpuPercent().ifPresent(v -> m.put("cpu_percent", v));
    s.memoryBytes().ifPresent(v -> m.put("memory_bytes", v));
    s.memoryPeakBytes().ifPresent(v -> m.put("memory_peak_bytes", v));
    s.pids().ifPresent(v -> m.put("pids", v));
    s.diskBytes().ifPresent(v -> m.put("disk_bytes", v));
    s.networkRxBytes().ifPresent(v -> m.put("network_rx_bytes", v));
    s.networkTxBytes().ifPresent(v -> m.put("network_tx_bytes", v));
    return m;
  }

  private static String decimal(OptionalDouble value, String format) {
    return value.isPresent() ? String.format(Locale.ROOT, format, value.getAsDouble()) : "-";
  }

  /** 1.5MiB, 12KiB, 800B, as docker stats prints them. */
  static String bytes(OptionalLong value) {
    if (value.isEmpty()) {
      return "-";
    }
    double n = value.getAsLong();
    String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (n >= 1024 && unit < units.length - 1) {
      n /= 1024;
      unit++;
    }
    return unit == 0 ? (long) n + units[0] : String.format(Locale.ROOT, "%.1f%s", n, units[unit]);
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "logs",
      description = {
        "Print a sandbox's kept log: its lifecycle events and its agent's output.",
        "Kept after delete for PADDOCK_LOG_RETENTION (default 7 days)."
      })
  static final class Logs implements Callable<Integer> {
    @Mixin Connection connection;

    @Parameters(paramLabel = "ID")
    String id;

    @Option(
        names = {"-f", "--follow"},
        description = "keep printing new lines until the sandbox ends")
    boolean follow;

    @Override
    public Integer call() {
      try (InputStream in = connection.client().logs(id, follow)) {
        byte[] buffer = new byte[8192];
        for (int n; (n = in.read(buffer)) >= 0; ) {
          System.out.write(buffer, 0, n);
          System.out.flush();
        }
      } catch (IOException e) {
        throw new UncheckedIOException("reading the log of " + id + " failed", e);
      }
      return 0;
    }
  }
}
