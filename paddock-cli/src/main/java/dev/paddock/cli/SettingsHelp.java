package dev.paddock.cli;

import dev.paddock.api.settings.Setting;

/** The "Settings" section of {@code paddock server --help}: every setting, by component. */
final class SettingsHelp {
  private SettingsHelp() {}

  static String render(SettingsCatalog catalog) {
    StringBuilder out = new StringBuilder();
    out.append("\nSettings: from the environment, <data dir>/paddock.properties or a flag (a flag")
        .append(" overrides the\nenvironment, which overrides the file). `paddock config` prints")
        .append(" the effective values.\n");
    for (SettingsCatalog.Group group : catalog.groups()) {
      out.append("\n").append(group.title()).append(":\n");
      for (Setting<?> setting : group.settings()) {
        entry(out, setting);
      }
    }
    return out.toString();
  }

  private static void entry(StringBuilder out, Setting<?> setting) {
    out.append("  ");
    if (setting.isFamily()) {
      out.append(setting.name()).append("<NAME>");
    } else {
      out.append(setting.name()).append("  ").append(setting.flag()).append("=VALUE");
    }
    if (!setting.aliases().isEmpty()) {
      out.append("  (also ").append(String.join(", ", setting.aliases())).append(')');
    }
    out.append("\n      ").append(setting.description());
    if (!setting.isFamily()) {
      out.append("; ").append(setting.allowed());
    }
    out.append(". Default: ").append(setting.defaultText());
    if (setting.isSecret()) {
      out.append(" (secret)");
    }
    out.append("\n");
  }
}
