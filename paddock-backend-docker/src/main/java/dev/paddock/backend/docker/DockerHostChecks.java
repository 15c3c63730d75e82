package dev.paddock.backend.docker;

import dev.paddock.api.spi.HostCheck;
import dev.paddock.backend.docker.DockerEngine.EngineException;
import dev.paddock.backend.docker.DockerEngine.Response;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code paddock doctor}'s Docker checks, in the order a failure explains the next: the socket and
 * its permissions, the engine answering (version, API), the default image present and built for the
 * engine's architecture, free disk under the engine's root, the engine's clock. Each engine call
 * has a short deadline so a hung engine is a failure, not a hung doctor.
 */
final class DockerHostChecks {
  private static final Duration CALL_LIMIT = Duration.ofSeconds(5);
  private static final Duration CLOCK_WARN = Duration.ofSeconds(30);

  private final DockerSettings settings;
  private final DockerEngine engine;

  private DockerHostChecks(DockerSettings settings) {
    this.settings = settings;
    this.engine = DockerEngine.connect(settings.dockerHost(), CALL_LIMIT);
  }

  static List<HostCheck> run(Map<String, String> flattened) {
    DockerSettings settings;
    try {
      settings = DockerSettings.from(flattened);
    } catch (RuntimeException e) {
      return List.of(
          HostCheck.fail("docker settings", e.getMessage(), "correct it (paddock config lists)"));
    }
    return new DockerHostChecks(settings).all();
  }

  private List<HostCheck> all() {
    List<HostCheck> checks = new ArrayList<>();
    socket().ifPresent(checks::add);
    Map<String, Object> version;
    try {
      version = engine.get("/version").json();
    } catch (EngineException | IllegalArgumentException e) {
      checks.add(
          HostCheck.fail(
              "docker engine",
              "no engine answers at " + settings.dockerHost() + ": " + e.getMessage(),
              "start it (systemctl start docker, or dockerd &), or point docker.host /"
                  + " DOCKER_HOST at the engine"));
      for (String skipped : List.of("default image", "free disk (engine root)", "engine clock")) {
        checks.add(HostCheck.skipped(skipped, "the engine does not answer"));
      }
      return checks;
    }
    checks.add(engineVersion(version));
    checks.add(image(String.valueOf(version.get("Os")), String.valueOf(version.get("Arch"))));
    Map<String, Object> info = info();
    checks.add(engineDisk(info));
    checks.add(engineClock(info));
    return checks;
  }

  /** A unix socket must exist and be readable and writable by us (the docker group, usually). */
  private Optional<HostCheck> socket() {
    URI uri = URI.create(settings.dockerHost());
    if (!"unix".equalsIgnoreCase(uri.getScheme())) {
      return Optional.empty();
    }
    Path path = Path.of(uri.getPath());
    String name = "docker socket";
    if (!Files.exists(path)) {
      return Optional.of(
          HostCheck.fail(
              name,
              path + " does not exist",
              "start the engine (systemctl start docker), or set docker.host / DOCKER_HOST"));
    }
    if (!Files.isReadable(path) || !Files.isWritable(path)) {
      return Optional.of(
          HostCheck.fail(
              name,
              path + " is not readable and writable by " + System.getProperty("user.name"),
              "add the user to the socket's group (usermod -aG docker USER), then log in again"));
    }
    return Optional.of(HostCheck.ok(name, path + " is readable and writable"));
  }

  private static HostCheck engineVersion(Map<String, Object> version) {
    String detail =
        "Docker "
            + version.get("Version")
            + " (API "
            + version.get("ApiVersion")
            + ", "
            + version.get("Os")
            + "/"
            + version.get("Arch")
            + ")";
    String api = String.valueOf(version.get("ApiVersion"));
    if (DockerEngine.compare(api, DockerEngine.MIN_API) < 0) {
      return HostCheck.fail(
          "docker engine",
          detail + " is older than Paddock needs (API " + DockerEngine.MIN_API + ")",
          "upgrade to Docker 20.10 or newer");
    }
    return HostCheck.ok("docker engine", detail + " answers");
  }

  /** The default spec's image: present, and of the engine's OS and architecture. */
  private HostCheck image(String engineOs, String engineArch) {
    String image = settings.images().get(0);
    String name = "default image";
    Response found = engine.get("/images/" + image + "/json");
    if (found.status() == 404) {
      return HostCheck.fail(
          name,
          image + " is not on the engine",
          "build it here: ./paddock docker-image"
              + (image.equals(DockerSettings.DEFAULT_IMAGE) ? "" : " " + image));
    }
    if (!found.ok()) {
      return HostCheck.fail(
          name, "inspect of " + image + ": " + found.message(), "check the engine");
    }
    Map<String, Object> json = found.json();
    String platform = json.get("Os") + "/" + json.get("Architecture");
    long size = json.get("Size") instanceof Number n ? n.longValue() : 0;
    if (!platform.equals(engineOs + "/" + engineArch)) {
      return HostCheck.fail(
          name,
          image
              + " is built for "
              + platform
              + ", this engine runs "
              + engineOs
              + "/"
              + engineArch
              + " (its programs would fail with 'exec format error')",
          "rebuild it on this host: ./paddock docker-image"
              + (image.equals(DockerSettings.DEFAULT_IMAGE) ? "" : " " + image)
              + ", or use an image for "
              + engineOs
              + "/"
              + engineArch);
    }
    return HostCheck.ok(name, image + " (" + platform + ", " + HostCheck.bytes(size) + ")");
  }

  private Map<String, Object> info() {
    try {
      return engine.get("/info").json();
    } catch (EngineException e) {
      return Map.of();
    }
  }

  /** Images, containers and volumes live under the engine's root; only visible on this host. */
  private HostCheck engineDisk(Map<String, Object> info) {
    String name = "free disk (engine root)";
    Object root = info.get("DockerRootDir");
    if (root == null) {
      return HostCheck.skipped(name, "the engine did not say where its root is");
    }
    Path path = Path.of(root.toString());
    if (!"unix".equalsIgnoreCase(URI.create(settings.dockerHost()).getScheme())
        || !Files.isDirectory(path)) {
      return HostCheck.skipped(name, root + " is not on this host; check free space there");
    }
    return HostCheck.freeDisk(name, path);
  }

  /** Timeouts, lifetimes and archive dates compare our clock with what the engine records. */
  private static HostCheck engineClock(Map<String, Object> info) {
    String name = "engine clock";
    Object time = info.get("SystemTime");
    if (time == null) {
      return HostCheck.skipped(name, "the engine did not report its time");
    }
    try {
      Duration skew = Duration.between(Instant.parse(time.toString()), Instant.now()).abs();
      String detail = "the engine's clock is " + skew.toMillis() + " ms from ours";
      return skew.compareTo(CLOCK_WARN) > 0
          ? HostCheck.warn(name, detail, "synchronise both clocks (systemd-timesyncd, chrony)")
          : HostCheck.ok(name, detail);
    } catch (DateTimeParseException e) {
      return HostCheck.skipped(name, "unreadable engine time " + time);
    }
  }
}
