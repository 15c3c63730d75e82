package dev.paddock.api.settings;

import java.util.Locale;

/**
 * Where a setting's value came from, lowest precedence first: a later source overrides an earlier
 * one.
 */
public enum SettingSource {
  /** The declared default (nothing was set). */
  DEFAULT,
  /** {@code <data dir>/paddock.properties}. */
  FILE,
  /** The environment. */
  ENV,
  /** A command-line flag. */
  FLAG;

  /** {@code default}, {@code file}, {@code env} or {@code flag}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}
