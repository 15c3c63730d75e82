package dev.paddock.cli;

import dev.paddock.api.settings.Setting;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Gives a command one flag per declared setting ({@link Setting#flag()}, e.g. {@code --port},
 * {@code --docker-memory}) plus {@code --set NAME=VALUE} for any name, and a "Settings" section in
 * its help that lists every setting by component with its flag, default and what it does.
 */
final class SettingFlags {
  static final String SET = "--set";
  private static final String SECTION = "settings";

  private final Map<String, Setting<?>> byFlag = new LinkedHashMap<>();

  private SettingFlags() {}

  /** Adds the flags and the help section to {@code command}. */
  static SettingFlags install(CommandLine command, SettingsCatalog catalog) {
    SettingFlags flags = new SettingFlags();
    CommandSpec spec = command.getCommandSpec();
    for (Setting<?> setting : catalog.all()) {
      if (setting.isFamily() || flags.byFlag.containsKey(setting.flag())) {
        continue;
      }
      flags.byFlag.put(setting.flag(), setting);
      spec.addOption(
          OptionSpec.builder(setting.flag())
              .paramLabel("VALUE")
              .type(String.class)
              .hidden(true)
              .description(setting.description())
              .build());
    }
    spec.addOption(
        OptionSpec.builder(SET)
            .paramLabel("NAME=VALUE")
            .type(List.class)
            .auxiliaryTypes(String.class)
            .description(
                "any setting by name (repeatable); every setting below also has its own flag")
            .build());
    command.getHelpSectionMap().put(SECTION, help -> SettingsHelp.render(catalog));
    List<String> keys = new ArrayList<>(command.getHelpSectionKeys());
    keys.add(keys.indexOf(CommandLine.Model.UsageMessageSpec.SECTION_KEY_FOOTER_HEADING), SECTION);
    command.setHelpSectionKeys(keys);
    return flags;
  }

  /**
   * The settings given on the command line, by setting name.
   *
   * @throws IllegalArgumentException for a {@code --set} without {@code =}
   */
  Map<String, String> values(CommandSpec spec) {
    Map<String, String> values = new LinkedHashMap<>();
    OptionSpec set = spec.findOption(SET);
    List<String> pairs = set == null ? null : set.getValue();
    if (pairs != null) {
      for (String pair : pairs) {
        int eq = pair.indexOf('=');
        if (eq < 1) {
          throw new IllegalArgumentException("--set takes NAME=VALUE, got '" + pair + "'");
        }
        values.put(pair.substring(0, eq).trim(), pair.substring(eq + 1));
      }
    }
    byFlag.forEach(
        (flag, setting) -> {
          String value = spec.findOption(flag).getValue();
          if (value != null) {
            values.put(setting.name(), value);
          }
        });
    return values;
  }
}
