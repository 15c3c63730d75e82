package dev.paddock.api;

import java.util.Objects;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * Resource limits of a sandbox; each absent limit means "backend default". Isolating backends
 * enforce every limit they can and say which they cannot.
 *
 * @param cpus CPU cores (fractions allowed)
 * @param memoryBytes memory limit
 * @param pids most processes
 * @param diskBytes workspace disk limit, where the backend's storage allows
 */
public record Resources(
    OptionalDouble cpus, OptionalLong memoryBytes, OptionalInt pids, OptionalLong diskBytes) {
  public static final Resources NONE =
      new Resources(
          OptionalDouble.empty(), OptionalLong.empty(), OptionalInt.empty(), OptionalLong.empty());

  public Resources {
    Objects.requireNonNull(cpus, "cpus");
    Objects.requireNonNull(memoryBytes, "memoryBytes");
    Objects.requireNonNull(pids, "pids");
    Objects.requireNonNull(diskBytes, "diskBytes");
  }
}
