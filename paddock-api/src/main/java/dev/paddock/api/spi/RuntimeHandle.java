package dev.paddock.api.spi;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * How a backend finds a runtime again: persisted by the control plane, so it survives restarts.
 *
 * @param sandboxId the sandbox
 * @param backend the backend's name
 * @param attributes backend-specific facts (pid and start time, container id, port, ...), plus the
 *     shared {@link #UNENFORCED} attribute
 */
public record RuntimeHandle(String sandboxId, String backend, Map<String, String> attributes) {
  /**
   * The attribute naming the limits of the sandbox's spec that the backend could not enforce on
   * this host, comma-separated from {@code cpus}, {@code memory}, {@code pids}, {@code disk}
   * (absent or empty: every requested limit is enforced). Read it with {@link #unenforcedLimits()};
   * the reasons are in the backend's log.
   */
  public static final String UNENFORCED = "unenforced";

  /**
   * The attribute naming where the sandbox's working directory really is, as its commands see it
   * (e.g. the process backend's absolute path for a spec's {@code "."}). Absent: the spec's or the
   * create's working directory is the path itself (image-based backends). Read it with {@link
   * #workingDir()}.
   */
  public static final String WORKING_DIR = "working_dir";

  /**
   * The attribute {@code "true"} on a runtime whose agent-server came with its image and takes its
   * session key at launch only (OpenHands' contract): the control plane cannot rotate or revoke its
   * key at the agent, so {@link SandboxBackend#pause} stops it and a resume goes through {@link
   * SandboxBackend#relaunch} with a new key. Read it with {@link #launchKeyed()}.
   */
  public static final String LAUNCH_KEYED = "launch-keyed";

  public RuntimeHandle {
    Objects.requireNonNull(sandboxId, "sandboxId");
    Objects.requireNonNull(backend, "backend");
    attributes = Map.copyOf(attributes);
  }

  /** Where the runtime's working directory is (see {@link #WORKING_DIR}), when it says. */
  public Optional<String> workingDir() {
    return Optional.ofNullable(attributes.get(WORKING_DIR));
  }

  /** The same handle with {@code name} set to {@code value}. */
  public RuntimeHandle withAttribute(String name, String value) {
    Map<String, String> changed = new java.util.LinkedHashMap<>(attributes);
    changed.put(name, value);
    return new RuntimeHandle(sandboxId, backend, changed);
  }

  /**
   * Whether this runtime's agent takes its session key at launch only (see {@link #LAUNCH_KEYED}).
   */
  public boolean launchKeyed() {
    return "true".equals(attributes.get(LAUNCH_KEYED));
  }

  /** The requested limits this runtime runs without (see {@link #UNENFORCED}); usually empty. */
  public List<String> unenforcedLimits() {
    String value = attributes.getOrDefault(UNENFORCED, "");
    return Arrays.stream(value.split(",")).map(String::strip).filter(s -> !s.isEmpty()).toList();
  }
}
