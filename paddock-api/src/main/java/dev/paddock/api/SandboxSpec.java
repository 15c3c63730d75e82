package dev.paddock.api;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The template a sandbox is made from. Specs are data: they come from configuration.
 *
 * @param id the spec id (for image-based backends, the image reference unless {@code image} is set)
 * @param command the command that starts the agent-server, or arguments to the image's entry point
 *     (backend-specific; empty for the backend's default)
 * @param initialEnv environment for the sandbox (forwarded host variables merged in)
 * @param workingDir the workspace directory inside the sandbox
 * @param resources limits
 * @param createdAt when the spec was defined
 * @param image the image to run (image-based backends); empty: the spec id is the image. The
 *     control plane sets it on the per-sandbox effective spec when a create names an image
 * @param timeout the lifetime of a sandbox of this spec whose create names none (bounded by the
 *     operator's {@code PADDOCK_MAX_TIMEOUT}); empty: the operator's default
 * @param idleTimeout the idle timeout of a sandbox of this spec whose create names none; empty: the
 *     operator's default
 * @param agentServer whose agent-server the sandbox runs: Paddock's (injected by the backend) or
 *     the image's own, started by its entry point and configured through OpenHands' launch contract
 *     (image-based backends only)
 */
public record SandboxSpec(
    String id,
    List<String> command,
    Map<String, String> initialEnv,
    String workingDir,
    Resources resources,
    Instant createdAt,
    Optional<String> image,
    Optional<Duration> timeout,
    Optional<Duration> idleTimeout,
    AgentServer agentServer) {
  /** Whose agent-server a sandbox runs. */
  public enum AgentServer {
    /** Paddock's own agent-server, injected by the backend (the default). */
    PADDOCK,
    /**
     * The image's own agent-server (e.g. OpenHands' agent-server images): the backend starts the
     * image's entry point with OpenHands' launch variables ({@code OH_SESSION_API_KEYS_0}, ...) and
     * waits for its {@code GET /alive}. Such an agent takes its session key at launch only.
     */
    IMAGE
  }

  public SandboxSpec {
    Objects.requireNonNull(id, "id");
    command = List.copyOf(command);
    initialEnv = Map.copyOf(initialEnv);
    Objects.requireNonNull(workingDir, "workingDir");
    Objects.requireNonNull(resources, "resources");
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(image, "image");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(idleTimeout, "idleTimeout");
    Objects.requireNonNull(agentServer, "agentServer");
  }

  /** A spec whose sandboxes run Paddock's own agent-server. */
  public SandboxSpec(
      String id,
      List<String> command,
      Map<String, String> initialEnv,
      String workingDir,
      Resources resources,
      Instant createdAt,
      Optional<String> image) {
    this(
        id,
        command,
        initialEnv,
        workingDir,
        resources,
        createdAt,
        image,
        Optional.empty(),
        Optional.empty(),
        AgentServer.PADDOCK);
  }

  /** The image an image-based backend runs: {@link #image()} when set, else the spec id. */
  public String imageReference() {
    return image.orElse(id);
  }

  /** A builder holding this spec's values, to derive a per-sandbox spec from it. */
  public Builder toBuilder() {
    Builder builder = new Builder(id).command(command).env(initialEnv).workingDir(workingDir);
    builder.resources(resources).createdAt(createdAt);
    image.ifPresent(builder::image);
    timeout.ifPresent(builder::timeout);
    idleTimeout.ifPresent(builder::idleTimeout);
    return builder.agentServer(agentServer);
  }

  public static Builder builder(String id) {
    return new Builder(id);
  }

  /** Builder; not thread-safe. */
  public static final class Builder {
    private final String id;
    private List<String> command = List.of();
    private final Map<String, String> initialEnv = new LinkedHashMap<>();
    private String workingDir = ".";
    private Resources resources = Resources.NONE;
    private Instant createdAt = Instant.EPOCH;
    private Optional<String> image = Optional.empty();
    private Optional<Duration> timeout = Optional.empty();
    private Optional<Duration> idleTimeout = Optional.empty();
    private AgentServer agentServer = AgentServer.PADDOCK;

    private Builder(String id) {
      this.id = Objects.requireNonNull(id, "id");
    }

    public Builder command(List<String> command) {
      this.command = List.copyOf(command);
      return this;
    }

    public Builder env(Map<String, String> env) {
      this.initialEnv.putAll(env);
      return this;
    }

    public Builder workingDir(String dir) {
      this.workingDir = dir;
      return this;
    }

    public Builder resources(Resources resources) {
      this.resources = resources;
      return this;
    }

    public Builder createdAt(Instant at) {
      this.createdAt = at;
      return this;
    }

    /** The image to run instead of the spec id (image-based backends). */
    public Builder image(String image) {
      this.image = Optional.of(image);
      return this;
    }

    /** The default lifetime of this spec's sandboxes. */
    public Builder timeout(Duration timeout) {
      this.timeout = Optional.of(timeout);
      return this;
    }

    /** The default idle timeout of this spec's sandboxes. */
    public Builder idleTimeout(Duration idleTimeout) {
      this.idleTimeout = Optional.of(idleTimeout);
      return this;
    }

    /** Whose agent-server the sandboxes run (default {@link AgentServer#PADDOCK}). */
    public Builder agentServer(AgentServer agentServer) {
      this.agentServer = Objects.requireNonNull(agentServer, "agentServer");
      return this;
    }

    public SandboxSpec build() {
      return new SandboxSpec(
          id,
          command,
          initialEnv,
          workingDir,
          resources,
          createdAt,
          image,
          timeout,
          idleTimeout,
          agentServer);
    }
  }
}
