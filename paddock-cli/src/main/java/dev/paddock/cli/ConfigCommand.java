package dev.paddock.cli;

import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code paddock config}: the settings {@code paddock server} would run with, read the same way
 * (config file, environment, the same flags), each with where it came from; secrets are redacted.
 * Unknown names are listed as warnings; an invalid value fails as it would at start-up.
 */
@Command(
    mixinStandardHelpOptions = true,
    name = "config",
    description = "Print the effective server settings and where each came from.")
final class ConfigCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  private final Map<String, String> environment;
  private final SettingsCatalog catalog;
  private SettingFlags flags;

  ConfigCommand(Map<String, String> environment, SettingsCatalog catalog) {
    this.environment = Map.copyOf(environment);
    this.catalog = catalog;
  }

  void install(CommandLine line) {
    flags = SettingFlags.install(line, catalog);
  }

  @Override
  public Integer call() {
    Map<String, String> given = flags.values(spec);
    Path data = SettingsCatalog.dataDir(environment, given);
    Settings settings = catalog.load(data, environment, given);
    PrintWriter out = spec.commandLine().getOut();
    out.println("# data directory " + data);
    for (SettingsCatalog.Group group : catalog.groups()) {
      out.println();
      out.println("# " + group.title());
      for (Setting<?> setting : group.settings()) {
        Settings.Effective e = settings.effective(setting);
        String name = setting.isFamily() ? setting.name() + "*" : e.name();
        String via = e.givenAs().equals(e.name()) ? "" : " as " + e.givenAs();
        String value = e.value();
        if (value.equals("(unset)") && !setting.defaultText().equals("none")) {
          value = "(unset: " + setting.defaultText() + ")";
        }
        out.println(name + " = " + value + "  (" + e.source().label() + via + ")");
      }
    }
    PrintWriter err = spec.commandLine().getErr();
    settings.warnings().forEach(w -> err.println("paddock: warning: " + w));
    out.flush();
    err.flush();
    return 0;
  }
}
