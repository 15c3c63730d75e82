package dev.paddock.cli;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code paddock spec list}: the sandbox specs the server offers. */
@Command(
    name = "spec",
    mixinStandardHelpOptions = true,
    description = "Sandbox specs: the templates sandboxes are made from.",
    subcommands = {SpecCommands.ListAll.class})
final class SpecCommands {
  private SpecCommands() {}

  @Command(
      mixinStandardHelpOptions = true,
      name = "list",
      description = "List the specs (the first is the default) with their defaults.")
  static final class ListAll implements Callable<Integer> {
    @Mixin Connection connection;

    @Override
    public Integer call() {
      List<SandboxSpec> specs = connection.client().specs();
      if (connection.json) {
        Printer.printJson(System.out, specs.stream().map(SpecCommands::json).toList());
      } else {
        table(System.out, specs);
      }
      return 0;
    }
  }

  static Map<String, Object> json(SandboxSpec spec) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", spec.id());
    m.put("working_dir", spec.workingDir());
    m.put("resources", Printer.resources(spec.resources()));
    m.put("timeout", spec.timeout().map(Duration::toSeconds).orElse(null));
    m.put("idle_timeout", spec.idleTimeout().map(Duration::toSeconds).orElse(null));
    m.put("env", spec.initialEnv().keySet().stream().sorted().toList());
    return m;
  }

  static void table(PrintStream out, List<SandboxSpec> specs) {
    out.printf("%-28s %-22s %-9s %-9s %s%n", "ID", "WORKING DIR", "TIMEOUT", "IDLE", "RESOURCES");
    for (SandboxSpec spec : specs) {
      String resources = String.join(" ", resources(spec.resources()));
      out.printf(
          "%-28s %-22s %-9s %-9s %s%n",
          spec.id(),
          spec.workingDir(),
          spec.timeout().map(SpecCommands::seconds).orElse("-"),
          spec.idleTimeout().map(SpecCommands::seconds).orElse("-"),
          resources.isEmpty() ? "-" : resources);
    }
  }

  private static String seconds(Duration d) {
    return d.toSeconds() + "s";
  }

  /** {@code cpus=2 memory=2g pids=1024 disk=10g}, each only when the spec sets it. */
  private static List<String> resources(Resources r) {
    List<String> parts = new ArrayList<>();
    r.cpus().ifPresent(v -> parts.add("cpus=" + Printer.number(v)));
    r.memoryBytes().ifPresent(v -> parts.add("memory=" + Printer.size(v)));
    r.pids().ifPresent(v -> parts.add("pids=" + v));
    r.diskBytes().ifPresent(v -> parts.add("disk=" + Printer.size(v)));
    return parts;
  }
}
