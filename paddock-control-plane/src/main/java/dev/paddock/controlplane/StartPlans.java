package dev.paddock.controlplane;

import dev.paddock.api.InvalidRequestException;
import dev.paddock.api.LifetimeAction;
import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSettings;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.StartRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Turns a {@link StartRequest} into what a start needs: the sandbox's effective spec (the spec's
 * defaults overridden by the request: image, env, resources, working dir) that the backend applies,
 * the settings kept with the sandbox, and the end of its lifetime. What the request leaves out
 * comes from the spec (resources, timeout, idle timeout, each brought down to the operator's
 * maximum), then from the operator's defaults. Every value is checked here, so every caller of the
 * service gets the same answers: a name that is not allowed is an {@link
 * InvalidRequestException#badRequest} listing what is (400), a value out of bounds an {@link
 * InvalidRequestException} naming the bound (422).
 */
final class StartPlans {
  static final int MAX_LABELS = 64;
  static final int MAX_LABEL_VALUE = 256;
  static final int MAX_ENV = 256;
  static final int MAX_ENV_VALUE = 128 * 1024;

  // Kubernetes label keys: an optional DNS-subdomain prefix and '/', then a name of 1-63
  // alphanumerics, '-', '_' or '.', starting and ending alphanumeric.
  private static final Pattern LABEL_NAME =
      Pattern.compile("[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?");
  private static final Pattern LABEL_PREFIX =
      Pattern.compile("[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*");
  private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  // What the control plane and the agent own: keys, secrets and Paddock's own variables.
  private static final Pattern RESERVED_ENV =
      Pattern.compile("PADDOCK_.*|SESSION_API_KEY|OH_SESSION_API_KEYS_.*|OH_SECRET_KEY");

  /** What a start makes: the effective spec, the kept settings, the end of the lifetime. */
  record Plan(SandboxSpec spec, SandboxSettings settings, Optional<Instant> timeoutAt) {}

  private final SandboxSpecService specs;
  private final SandboxLimits limits;

  StartPlans(SandboxSpecService specs, SandboxLimits limits) {
    this.specs = specs;
    this.limits = limits;
  }

  Plan plan(StartRequest request, Instant now) {
    SandboxSpec base = resolveSpec(request.specId());
    SandboxSpec.Builder effective = base.toBuilder().env(validEnv(request.env()));
    request.image().map(this::allowedImage).ifPresent(effective::image);
    Resources resources = resources(base.resources(), request.resources());
    effective.resources(resources);
    request.workingDir().map(StartPlans::validWorkingDir).ifPresent(effective::workingDir);
    SandboxSpec spec = effective.build();
    Optional<Duration> timeout =
        request
            .timeout()
            .map(this::validTimeout)
            .or(() -> base.timeout().map(this::withinMaxTimeout))
            .or(() -> defaultTimeout().map(this::validTimeout));
    Optional<Duration> idle =
        request
            .idleTimeout()
            .map(d -> positive("idle_timeout", d))
            .or(base::idleTimeout)
            .or(limits::defaultIdleTimeout);
    SandboxSettings settings =
        new SandboxSettings(
            request.image(),
            validLabels(request.labels()),
            resources,
            Optional.of(spec.workingDir()),
            timeout,
            idle,
            request.onTimeout().orElse(LifetimeAction.DELETE),
            request.onIdle().orElse(LifetimeAction.PAUSE),
            request.autoResume(),
            java.util.Set.of());
    return new Plan(spec, settings, timeout.map(now::plus));
  }

  private SandboxSpec resolveSpec(Optional<String> specId) {
    if (specId.isEmpty()) {
      return specs.defaultSpec();
    }
    return specs
        .get(specId.get())
        .orElseThrow(
            () ->
                InvalidRequestException.badRequest(
                    "unknown sandbox spec '"
                        + specId.get()
                        + "'; allowed: "
                        + allSpecs().stream().map(SandboxSpec::id).toList()));
  }

  private String allowedImage(String image) {
    List<String> specImages = allSpecs().stream().map(SandboxSpec::imageReference).toList();
    if (specImages.contains(image) || limits.allowsImage(image)) {
      return image;
    }
    throw InvalidRequestException.badRequest(
        "image '"
            + image
            + "' is not allowed; allowed: the specs' images "
            + new TreeSet<>(specImages)
            + (limits.allowedImages().isEmpty()
                ? " (the operator allows no other: PADDOCK_ALLOWED_IMAGES is empty)"
                : " and images matching " + limits.allowedImages()));
  }

  private List<SandboxSpec> allSpecs() {
    List<SandboxSpec> all = new ArrayList<>();
    Optional<String> pageId = Optional.empty();
    do {
      Page<SandboxSpec> page = specs.search(new PageRequest(pageId, PageRequest.MAX_LIMIT));
      all.addAll(page.items());
      pageId = page.nextPageId();
    } while (pageId.isPresent());
    return all;
  }

  private Resources resources(Resources spec, Resources asked) {
    asked.cpus().ifPresent(v -> atMost("resources.cpus", v, limits.maxCpus(), "PADDOCK_MAX_CPUS"));
    asked
        .memoryBytes()
        .ifPresent(
            v -> atMost("resources.memory", v, limits.maxMemoryBytes(), "PADDOCK_MAX_MEMORY"));
    asked.pids().ifPresent(v -> atMost("resources.pids", v, limits.maxPids(), "PADDOCK_MAX_PIDS"));
    asked
        .diskBytes()
        .ifPresent(v -> atMost("resources.disk", v, limits.maxDiskBytes(), "PADDOCK_MAX_DISK"));
    return new Resources(
        asked.cpus().isPresent() ? asked.cpus() : lowest(spec.cpus(), limits.maxCpus()),
        asked.memoryBytes().isPresent()
            ? asked.memoryBytes()
            : lowest(spec.memoryBytes(), limits.maxMemoryBytes()),
        asked.pids().isPresent() ? asked.pids() : lowest(spec.pids(), limits.maxPids()),
        asked.diskBytes().isPresent()
            ? asked.diskBytes()
            : lowest(spec.diskBytes(), limits.maxDiskBytes()));
  }

  // A spec's default is the operator's own choice, so one over the operator's maximum is brought
  // down to it rather than refused: every create of that spec would otherwise fail.
  private static OptionalDouble lowest(OptionalDouble spec, OptionalDouble max) {
    return spec.isPresent() && max.isPresent() && spec.getAsDouble() > max.getAsDouble()
        ? max
        : spec;
  }

  private static OptionalLong lowest(OptionalLong spec, OptionalLong max) {
    return spec.isPresent() && max.isPresent() && spec.getAsLong() > max.getAsLong() ? max : spec;
  }

  private static OptionalInt lowest(OptionalInt spec, OptionalInt max) {
    return spec.isPresent() && max.isPresent() && spec.getAsInt() > max.getAsInt() ? max : spec;
  }

  private Duration withinMaxTimeout(Duration specTimeout) {
    return limits.maxTimeout().filter(max -> specTimeout.compareTo(max) > 0).orElse(specTimeout);
  }

  private static void atMost(String field, double value, OptionalDouble max, String setting) {
    if (!(value > 0)) {
      throw new InvalidRequestException(field + " must be positive, got " + value);
    }
    if (max.isPresent() && value > max.getAsDouble()) {
      throw overMaximum(field, String.valueOf(value), setting, String.valueOf(max.getAsDouble()));
    }
  }

  private static void atMost(String field, long value, OptionalLong max, String setting) {
    if (value <= 0) {
      throw new InvalidRequestException(field + " must be positive, got " + value);
    }
    if (max.isPresent() && value > max.getAsLong()) {
      throw overMaximum(field, value + " bytes", setting, max.getAsLong() + " bytes");
    }
  }

  private static void atMost(String field, int value, OptionalInt max, String setting) {
    if (value <= 0) {
      throw new InvalidRequestException(field + " must be positive, got " + value);
    }
    if (max.isPresent() && value > max.getAsInt()) {
      throw overMaximum(field, String.valueOf(value), setting, String.valueOf(max.getAsInt()));
    }
  }

  private static InvalidRequestException overMaximum(
      String field, String value, String setting, String max) {
    return new InvalidRequestException(
        field + " " + value + " is over the operator's maximum " + setting + " (" + max + ")");
  }

  private Optional<Duration> defaultTimeout() {
    return limits.defaultTimeout().or(limits::maxTimeout);
  }

  /** A lifetime within the operator's maximum. */
  Duration validTimeout(Duration timeout) {
    positive("timeout", timeout);
    if (limits.maxTimeout().isPresent() && timeout.compareTo(limits.maxTimeout().get()) > 0) {
      throw overMaximum(
          "timeout",
          timeout.toSeconds() + " s",
          "PADDOCK_MAX_TIMEOUT",
          limits.maxTimeout().get().toSeconds() + " s");
    }
    return timeout;
  }

  /** The lifetime a keepalive without a timeout renews by. */
  Duration renewal(SandboxSettings settings) {
    return settings
        .timeout()
        .or(this::defaultTimeout)
        .orElseThrow(
            () ->
                new InvalidRequestException(
                    "the sandbox has no timeout and the operator set no PADDOCK_DEFAULT_TIMEOUT;"
                        + " give {\"timeout\": seconds}"));
  }

  private static Duration positive(String field, Duration d) {
    if (d.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new InvalidRequestException(field + " must be at least 1 second, got " + d);
    }
    return d;
  }

  /** Labels within their grammar and bounds. */
  static Map<String, String> validLabels(Map<String, String> labels) {
    if (labels.size() > MAX_LABELS) {
      throw new InvalidRequestException("at most " + MAX_LABELS + " labels, got " + labels.size());
    }
    labels.forEach(StartPlans::checkLabel);
    return labels;
  }

  private static void checkLabel(String key, String value) {
    int slash = key.indexOf('/');
    String prefix = slash < 0 ? "" : key.substring(0, slash);
    String name = slash < 0 ? key : key.substring(slash + 1);
    boolean prefixOk =
        slash < 0 || (prefix.length() <= 253 && LABEL_PREFIX.matcher(prefix).matches());
    if (!prefixOk || !LABEL_NAME.matcher(name).matches()) {
      throw new InvalidRequestException(
          "label key '"
              + key
              + "' is malformed: use an optional DNS-subdomain prefix and '/', then 1 to 63"
              + " letters, digits, '-', '_' or '.', starting and ending with a letter or digit");
    }
    if (value.length() > MAX_LABEL_VALUE || value.chars().anyMatch(Character::isISOControl)) {
      throw new InvalidRequestException(
          "label '"
              + key
              + "': the value must have at most "
              + MAX_LABEL_VALUE
              + " characters and no control characters");
    }
  }

  private static Map<String, String> validEnv(Map<String, String> env) {
    if (env.size() > MAX_ENV) {
      throw new InvalidRequestException("at most " + MAX_ENV + " env variables, got " + env.size());
    }
    Map<String, String> valid = new LinkedHashMap<>();
    env.forEach(
        (name, value) -> {
          if (!ENV_NAME.matcher(name).matches()) {
            throw new InvalidRequestException(
                "env name '"
                    + name
                    + "' is malformed: use letters, digits and '_', not starting"
                    + " with a digit");
          }
          if (RESERVED_ENV.matcher(name).matches()) {
            throw new InvalidRequestException(
                "env name '"
                    + name
                    + "' is reserved for Paddock (PADDOCK_*, session keys and"
                    + " secrets); choose another");
          }
          if (value.length() > MAX_ENV_VALUE || value.indexOf('\0') >= 0) {
            throw new InvalidRequestException(
                "env '"
                    + name
                    + "': the value must have at most "
                    + MAX_ENV_VALUE
                    + " characters and no NUL");
          }
          valid.put(name, value);
        });
    return valid;
  }

  private static String validWorkingDir(String dir) {
    boolean ok =
        dir.startsWith("/")
            && dir.length() <= 4096
            && dir.indexOf('\0') < 0
            && !List.of(dir.split("/")).contains("..");
    if (!ok) {
      throw new InvalidRequestException(
          "working_dir '" + dir + "' must be an absolute path without '..' (at most 4096 bytes)");
    }
    return dir;
  }
}
