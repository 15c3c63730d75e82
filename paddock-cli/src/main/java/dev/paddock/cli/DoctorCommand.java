package dev.paddock.cli;

import dev.paddock.api.settings.Settings;
import dev.paddock.api.spi.HostCheck;
import dev.paddock.api.spi.SandboxBackendProvider;
import dev.paddock.store.SandboxStores;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code paddock doctor}: checks this host the way {@code paddock server} would run on it (the same
 * settings: config file, environment, flags) and prints one line per check with its verdict, what
 * was seen and a fix. Exit code 0 when nothing failed (warnings allowed), 1 otherwise.
 */
@Command(
    mixinStandardHelpOptions = true,
    name = "doctor",
    description = "Check this host for running Paddock; print a verdict and a fix for each check.")
final class DoctorCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--no-sandbox",
      description = "skip starting a throwaway sandbox (the slowest check)")
  boolean noSandbox;

  private final Map<String, String> environment;
  private final SettingsCatalog catalog;
  private SettingFlags flags;

  DoctorCommand(Map<String, String> environment, SettingsCatalog catalog) {
    this.environment = Map.copyOf(environment);
    this.catalog = catalog;
  }

  void install(CommandLine line) {
    flags = SettingFlags.install(line, catalog);
  }

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    List<HostCheck> checks = new ArrayList<>();
    Map<String, String> given = flags.values(spec);
    Path data = SettingsCatalog.dataDir(environment, given);
    Settings typed;
    try {
      typed = catalog.load(data, environment, given);
    } catch (RuntimeException e) {
      checks.add(HostCheck.fail("settings", e.getMessage(), "correct them (paddock config)"));
      return report(out, checks);
    }
    Map<String, String> settings = ServerCommand.handedOn(typed, data);
    String runtime = typed.get(ServerSettings.RUNTIME);
    checks.add(HostCheck.ok("settings", "runtime " + runtime + ", data dir " + data));
    SandboxBackendProvider provider = provider(runtime).orElse(null);
    if (provider == null) {
      checks.add(
          HostCheck.fail(
              "backend", "no backend named '" + runtime + "'", "set RUNTIME=process|docker"));
    } else {
      checks.addAll(provider.hostChecks(settings));
    }
    HostChecks host = new HostChecks(Path.of("/"));
    checks.add(host.cgroups());
    checks.add(host.userNamespaces());
    checks.add(host.freeMemory());
    checks.add(HostChecks.dataDirDisk(data));
    checks.add(
        HostChecks.serverPort(typed.get(ServerSettings.HOST), typed.get(ServerSettings.PORT)));
    checks.add(HostChecks.clock(Instant.now(), HostChecks.buildTime()));
    checks.add(database(typed, data));
    checks.add(sandbox(provider, settings, checks));
    return report(out, checks);
  }

  private HostCheck sandbox(
      SandboxBackendProvider provider, Map<String, String> settings, List<HostCheck> before) {
    String name = "throwaway sandbox";
    if (noSandbox) {
      return HostCheck.skipped(name, "--no-sandbox");
    }
    if (provider == null) {
      return HostCheck.skipped(name, "no backend");
    }
    List<String> failed =
        before.stream()
            .filter(c -> c.verdict() == HostCheck.Verdict.FAIL)
            .map(HostCheck::name)
            .toList();
    if (failed.stream().anyMatch(n -> n.startsWith("docker") || n.equals("default image"))) {
      return HostCheck.skipped(name, "the backend's checks failed: " + failed);
    }
    return ThrowawaySandbox.run(provider, settings);
  }

  private static HostCheck database(Settings typed, Path data) {
    return typed
        .find(ServerSettings.DATABASE_URL)
        .map(
            url ->
                HostChecks.database(
                    url,
                    typed.get(ServerSettings.DATABASE_USER),
                    typed.find(ServerSettings.DATABASE_PASSWORD).orElse("")))
        .orElseGet(
            () ->
                HostChecks.database(
                    "jdbc:sqlite:" + data.resolve(SandboxStores.EMBEDDED_FILE).toAbsolutePath(),
                    "",
                    ""));
  }

  private static Optional<SandboxBackendProvider> provider(String name) {
    for (SandboxBackendProvider provider : ServiceLoader.load(SandboxBackendProvider.class)) {
      if (provider.names().contains(name)) {
        return Optional.of(provider);
      }
    }
    return Optional.empty();
  }

  /** One line per check, the fix indented under it, then the verdict; 1 when any check failed. */
  private static int report(PrintWriter out, List<HostCheck> checks) {
    int width = checks.stream().mapToInt(c -> c.name().length()).max().orElse(10);
    for (HostCheck check : checks) {
      out.printf("%-7s %-" + width + "s  %s%n", check.verdict(), check.name(), check.detail());
      if (!check.fix().isEmpty()) {
        out.printf("%-7s %-" + width + "s  fix: %s%n", "", "", check.fix());
      }
    }
    long failed = checks.stream().filter(c -> c.verdict() == HostCheck.Verdict.FAIL).count();
    long warned = checks.stream().filter(c -> c.verdict() == HostCheck.Verdict.WARN).count();
    out.println();
    out.println(
        failed == 0
            ? "paddock doctor: healthy (" + warned + " warning" + (warned == 1 ? "" : "s") + ")"
            : "paddock doctor: "
                + failed
                + " failed, "
                + warned
                + " warning"
                + (warned == 1 ? "" : "s"));
    out.flush();
    return failed == 0 ? 0 : 1;
  }
}
