package dev.paddock.api;

import java.util.Locale;

/** What the control plane does with a sandbox whose lifetime or idle time ran out. */
public enum LifetimeAction {
  /** Freeze it; the workspace stays and resume brings it back. */
  PAUSE,
  /** Delete it (archiving the workspace first when archives are on). */
  DELETE;

  /** The lower-case wire name ({@code pause}, {@code delete}). */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * @throws IllegalArgumentException for anything but {@code pause} or {@code delete}
   */
  public static LifetimeAction fromWire(String field, String value) {
    return switch (value) {
      case "pause" -> PAUSE;
      case "delete" -> DELETE;
      default ->
          throw new InvalidRequestException(
              field + " must be 'pause' or 'delete', got '" + value + "'");
    };
  }
}
