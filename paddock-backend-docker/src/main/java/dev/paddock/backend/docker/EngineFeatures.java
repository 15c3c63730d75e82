package dev.paddock.backend.docker;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * What the engine can do, read once from {@code GET /info} on first need and cached: whether its
 * storage driver enforces a disk limit, and which OCI runtimes it has registered (and which of them
 * are gVisor). Thread-safe: a race reads {@code /info} twice and keeps either answer (they are the
 * same).
 */
final class EngineFeatures {
  private final DockerEngine engine;
  private volatile Map<String, Object> info;

  EngineFeatures(DockerEngine engine) {
    this.engine = engine;
  }

  /**
   * overlay2 on xfs (with pquota) is the common driver that enforces {@code --storage-opt size}.
   */
  boolean diskLimits() {
    Map<String, Object> info = info();
    String driver = String.valueOf(info.get("Driver"));
    boolean xfs = String.valueOf(info.get("DriverStatus")).toLowerCase(Locale.ROOT).contains("xfs");
    return (driver.equals("overlay2") && xfs)
        || driver.equals("devicemapper")
        || driver.equals("zfs")
        || driver.equals("btrfs");
  }

  /** The OCI runtimes registered with the engine ({@code docker info}'s Runtimes), sorted. */
  List<String> runtimes() {
    return ContainerState.map(info().get("Runtimes")).keySet().stream().sorted().toList();
  }

  /**
   * Whether the named runtime is gVisor: its registered path's file name is {@code runsc} (the
   * Debian package's {@code /usr/bin/runsc}, or any name the operator registered it under, such as
   * {@code runsc-hostnet}). An unknown name is not gVisor.
   */
  boolean gvisor(String runtime) {
    Object path =
        ContainerState.map(ContainerState.map(info().get("Runtimes")).get(runtime)).get("path");
    if (path == null) {
      return false;
    }
    String file = path.toString();
    return file.substring(file.lastIndexOf('/') + 1).equals("runsc");
  }

  /** The runtime containers get when they name none. */
  Optional<String> defaultRuntime() {
    return Optional.ofNullable(info().get("DefaultRuntime")).map(Object::toString);
  }

  private Map<String, Object> info() {
    Map<String, Object> known = info;
    if (known == null) {
      DockerEngine.Response response = engine.get("/info");
      if (!response.ok()) {
        throw new DockerEngine.EngineException("engine info: " + response.message(), null);
      }
      known = response.json();
      info = known;
    }
    return known;
  }
}
