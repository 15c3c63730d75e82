package dev.paddock.api.settings;

import java.util.List;

/**
 * Settings that cannot be used: each problem names the setting, the value as given (never a
 * secret's) and where it came from, and says what is allowed. Start-up stops on it.
 */
public final class SettingsException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final transient List<String> problems;

  SettingsException(List<String> problems) {
    super(message(problems));
    this.problems = List.copyOf(problems);
  }

  /** One line per invalid setting. */
  public List<String> problems() {
    return problems;
  }

  private static String message(List<String> problems) {
    if (problems.size() == 1) {
      return problems.get(0);
    }
    return "invalid settings:\n  " + String.join("\n  ", problems);
  }
}
