package dev.paddock.backend.docker;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A container as the engine reported it in one {@code GET /containers/{id}/json}, parsed once: the
 * rest of the backend reads fields, never the engine's nested maps.
 *
 * @param id the container id
 * @param status the engine's {@code State.Status}: created, running, paused, restarting, removing,
 *     exited or dead
 * @param exitCode {@code State.ExitCode} (0 while running; 128 + n after signal n)
 * @param oomKilled {@code State.OOMKilled}: the kernel's OOM killer ended it
 * @param error {@code State.Error}: why the engine could not run it, empty usually
 * @param startedAt when it last started; empty if it never ran
 * @param finishedAt when it last stopped; empty if it never stopped
 * @param created when it was created
 * @param labels {@code Config.Labels}
 * @param hostNetwork whether it shares the host's network
 * @param publishedPorts container port to host port ({@code NetworkSettings.Ports})
 * @param volumes the named volumes it mounts (mount point to volume name)
 * @param runtime the OCI runtime it runs under ({@code HostConfig.Runtime}, e.g. runc)
 * @param name the container's name, without the engine's leading slash
 */
record ContainerState(
    String id,
    String status,
    int exitCode,
    boolean oomKilled,
    String error,
    Optional<Instant> startedAt,
    Optional<Instant> finishedAt,
    Optional<Instant> created,
    Map<String, String> labels,
    boolean hostNetwork,
    Map<Integer, Integer> publishedPorts,
    Map<String, String> volumes,
    String runtime,
    String name) {

  /** Docker reports a time that never happened as the year 1. */
  private static final Instant NEVER = Instant.parse("0001-01-02T00:00:00Z");

  ContainerState {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(status, "status");
    labels = Map.copyOf(labels);
    publishedPorts = Map.copyOf(publishedPorts);
    volumes = Map.copyOf(volumes);
  }

  /** Parses an inspect document; absent fields read as empty, never as a failure. */
  static ContainerState parse(Map<String, Object> json) {
    Map<String, Object> state = map(json.get("State"));
    Map<String, Object> host = map(json.get("HostConfig"));
    return new ContainerState(
        text(json.get("Id")),
        text(state.get("Status")),
        state.get("ExitCode") instanceof Number n ? n.intValue() : -1,
        Boolean.TRUE.equals(state.get("OOMKilled")),
        text(state.get("Error")),
        instant(state.get("StartedAt")),
        instant(state.get("FinishedAt")),
        instant(json.get("Created")),
        strings(map(map(json.get("Config")).get("Labels"))),
        "host".equals(host.get("NetworkMode")),
        ports(map(map(json.get("NetworkSettings")).get("Ports"))),
        volumes(json.get("Mounts")),
        text(host.get("Runtime")),
        text(json.get("Name")).replaceFirst("^/", ""));
  }

  boolean is(String engineStatus) {
    return status.equals(engineStatus);
  }

  /** Running or paused: its processes exist. */
  boolean alive() {
    return is("running") || is("paused");
  }

  /** Stopped after it ran (exited or dead), as opposed to created and never started. */
  boolean stopped() {
    return (is("exited") || is("dead")) && startedAt.isPresent();
  }

  Optional<String> label(String name) {
    return Optional.ofNullable(labels.get(name));
  }

  /** The signal that ended it, by the shell's convention of exit code 128 + n. */
  OptionalInt signal() {
    return exitCode > 128 && exitCode < 128 + 65
        ? OptionalInt.of(exitCode - 128)
        : OptionalInt.empty();
  }

  /** How it ended, for logs and safe messages: no paths, no output. */
  String exitSummary() {
    StringBuilder text = new StringBuilder("exit code ").append(exitCode);
    signal().ifPresent(s -> text.append(", signal ").append(s).append(signalName(s)));
    if (oomKilled) {
      text.append(", killed by the kernel for using too much memory");
    }
    return text.toString();
  }

  private static String signalName(int signal) {
    return switch (signal) {
      case 9 -> " (SIGKILL)";
      case 15 -> " (SIGTERM)";
      case 6 -> " (SIGABRT)";
      case 11 -> " (SIGSEGV)";
      case 2 -> " (SIGINT)";
      case 1 -> " (SIGHUP)";
      default -> "";
    };
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object value) {
    return value instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  private static String text(Object value) {
    return value == null ? "" : value.toString();
  }

  private static Optional<Instant> instant(Object value) {
    try {
      Instant at = Instant.parse(text(value));
      return at.isBefore(NEVER) ? Optional.empty() : Optional.of(at);
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  private static Map<String, String> strings(Map<String, Object> values) {
    Map<String, String> copy = new LinkedHashMap<>();
    values.forEach((k, v) -> copy.put(k, text(v)));
    return copy;
  }

  /** {@code {"8000/tcp": [{"HostIp": ..., "HostPort": "49153"}]}} to {@code 8000 -> 49153}. */
  static Map<Integer, Integer> ports(Map<String, Object> published) {
    Map<Integer, Integer> ports = new LinkedHashMap<>();
    published.forEach(
        (key, value) -> {
          if (value instanceof List<?> bindings && !bindings.isEmpty()) {
            String hostPort = text(map(bindings.get(0)).get("HostPort"));
            int slash = key.indexOf('/');
            if (!hostPort.isEmpty() && slash > 0) {
              ports.put(Integer.parseInt(key.substring(0, slash)), Integer.parseInt(hostPort));
            }
          }
        });
    return ports;
  }

  private static Map<String, String> volumes(Object mounts) {
    Map<String, String> volumes = new LinkedHashMap<>();
    if (mounts instanceof List<?> list) {
      for (Object mount : list) {
        Map<String, Object> m = map(mount);
        if ("volume".equals(m.get("Type")) && m.get("Name") != null) {
          volumes.put(text(m.get("Destination")), text(m.get("Name")));
        }
      }
    }
    return volumes;
  }
}
