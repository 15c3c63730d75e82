package dev.paddock.api.settings;

import java.nio.file.Path;
import java.util.List;

/**
 * The settings every component may read: where Paddock keeps its data and where it is installed.
 */
public final class CommonSettings {
  /** The data directory; {@code paddock.data-dir} is its older, internal name. */
  public static final Setting<Path> DATA_DIR =
      Setting.path("PADDOCK_DATA_DIR", "where Paddock keeps its store, sandboxes and archives")
          .withAliases("paddock.data-dir")
          .withDefaultText("~/.paddock");

  /** Where the agent-server build is found (a checkout or an installation). */
  public static final Setting<Path> HOME =
      Setting.path(
              "paddock.home", "the Paddock installation or checkout holding the built agent-server")
          .withDefaultText("the launcher's directory, else the working directory");

  /** Both, for a component's declarations. */
  public static final List<Setting<?>> ALL = List.of(DATA_DIR, HOME);

  private CommonSettings() {}

  /** The data directory, absolute: {@link #DATA_DIR} else {@code ~/.paddock}. */
  public static Path dataDir(Settings settings) {
    return settings
        .find(DATA_DIR)
        .orElseGet(() -> Path.of(System.getProperty("user.home"), ".paddock"))
        .toAbsolutePath()
        .normalize();
  }

  /** The installation directory, absolute: {@link #HOME} else the working directory. */
  public static Path home(Settings settings) {
    return settings.find(HOME).orElse(Path.of(".")).toAbsolutePath().normalize();
  }
}
