package dev.paddock.agent.core;

import dev.paddock.agent.user.RunAs;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Immutable agent-server settings. Build with {@link #builder()}; every field has a default that
 * suits a sandbox, so {@code AgentConfig.builder().build()} is a working (unauthenticated,
 * loopback-only) server.
 *
 * @param host address to bind; loopback ({@code 127.0.0.1}) unless set, with keys or without
 * @param port TCP port; 0 picks a free one (see {@link dev.paddock.agent.AgentServer#port()})
 * @param workspace default working directory of commands
 * @param fileRoots absolute directories file routes may touch; paths resolving outside are 403
 * @param eventsDir where command output is spooled; created if missing
 * @param sessionKeys accepted session keys (digests only); empty means {@code /api} is open
 * @param adminKeys keys for the admin routes (key rotation); empty disables them
 * @param defaultTimeout command timeout when a request names none
 * @param killGrace time between SIGTERM and SIGKILL when a command is stopped
 * @param outputCapBytes per-stream cap on the output kept for one command
 * @param maxEvents most bash events kept; the oldest are dropped first
 * @param maxEventAge events older than this are dropped
 * @param maxSpoolBytes most bytes of spooled output kept on disk across all commands
 * @param maxJsonBytes largest JSON request body accepted
 * @param forkServer fork one-shot commands from a long-lived bash (see ForkServer); when false, or
 *     when it cannot start, each command is a fresh {@code setsid bash -c}
 * @param runAs the user and group every process started for a user (shells, commands, git) runs as,
 *     with no supplementary groups and no capabilities, and who owns the files the agent writes for
 *     them; empty runs them as the agent. Switching needs an agent running as root and {@code
 *     setpriv} (see {@link dev.paddock.agent.user.CommandUser})
 * @param home {@code HOME} of those processes, created if missing (and given to {@code runAs});
 *     empty keeps the agent's {@code HOME}, or uses the workspace when {@code runAs} switches user
 * @param oomCounterFile a file with an {@code oom_kill N} line (cgroup v2 {@code memory.events}, v1
 *     {@code memory.oom_control}) read before and after each command to tell an OOM kill; empty
 *     finds the agent's own cgroup's file, and none found means OOM kills are never reported
 * @param sandboxId the id of the sandbox this agent serves, given to commands as {@code
 *     SANDBOX_ID}; empty outside a sandbox (then commands get no {@code SANDBOX_ID})
 * @param pluginPath a directory whose jars hold {@link dev.paddock.agent.plugin.AgentPlugin}s to
 *     load at start; empty loads none
 */
public record AgentConfig(
    String host,
    int port,
    Path workspace,
    List<Path> fileRoots,
    Path eventsDir,
    KeyRing sessionKeys,
    KeyRing adminKeys,
    Duration defaultTimeout,
    Duration killGrace,
    long outputCapBytes,
    int maxEvents,
    Duration maxEventAge,
    long maxSpoolBytes,
    long maxJsonBytes,
    boolean forkServer,
    Optional<RunAs> runAs,
    Optional<Path> home,
    Optional<Path> oomCounterFile,
    Optional<String> sandboxId,
    Optional<Path> pluginPath) {

  public AgentConfig {
    Objects.requireNonNull(pluginPath, "pluginPath");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(workspace, "workspace");
    fileRoots = List.copyOf(fileRoots);
    Objects.requireNonNull(eventsDir, "eventsDir");
    Objects.requireNonNull(sessionKeys, "sessionKeys");
    Objects.requireNonNull(adminKeys, "adminKeys");
    Objects.requireNonNull(runAs, "runAs");
    Objects.requireNonNull(home, "home");
    Objects.requireNonNull(oomCounterFile, "oomCounterFile");
    Objects.requireNonNull(sandboxId, "sandboxId");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port must be 0..65535, got " + port);
    }
    if (!workspace.isAbsolute() || !eventsDir.isAbsolute()) {
      throw new IllegalArgumentException("workspace and eventsDir must be absolute paths");
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Builder with sandbox defaults. Not thread-safe. */
  public static final class Builder {
    private String host;
    private int port = 8000;
    private Path workspace = Path.of("").toAbsolutePath();
    private List<Path> fileRoots = List.of(Path.of("/"));
    private Path eventsDir;
    private KeyRing sessionKeys = KeyRing.ofKeys(List.of());
    private KeyRing adminKeys = KeyRing.ofKeys(List.of());
    private Duration defaultTimeout = Duration.ofSeconds(300);
    private Duration killGrace = Duration.ofSeconds(2);
    private long outputCapBytes = 10L << 20;
    private int maxEvents = 10_000;
    private Duration maxEventAge = Duration.ofDays(7);
    private long maxSpoolBytes = 1L << 30;
    private long maxJsonBytes = 4L << 20;
    private boolean forkServer = true;
    private Optional<RunAs> runAs = Optional.empty();
    private Optional<Path> home = Optional.empty();
    private Optional<Path> oomCounterFile = Optional.empty();
    private Optional<String> sandboxId = Optional.empty();
    private Optional<Path> pluginPath = Optional.empty();

    private Builder() {}

    /** The sandbox's id, for commands' {@code SANDBOX_ID}; blank means none. */
    public Builder sandboxId(String id) {
      this.sandboxId = id.isBlank() ? Optional.empty() : Optional.of(id);
      return this;
    }

    public Builder pluginPath(Path directory) {
      this.pluginPath = Optional.of(directory.toAbsolutePath().normalize());
      return this;
    }

    public Builder runAs(RunAs user) {
      this.runAs = Optional.of(user);
      return this;
    }

    public Builder home(Path home) {
      this.home = Optional.of(home.toAbsolutePath().normalize());
      return this;
    }

    public Builder oomCounterFile(Path file) {
      this.oomCounterFile = Optional.of(file.toAbsolutePath().normalize());
      return this;
    }

    public Builder forkServer(boolean enabled) {
      this.forkServer = enabled;
      return this;
    }

    public Builder host(String host) {
      this.host = host;
      return this;
    }

    public Builder port(int port) {
      this.port = port;
      return this;
    }

    public Builder workspace(Path workspace) {
      this.workspace = workspace.toAbsolutePath().normalize();
      return this;
    }

    public Builder fileRoots(List<Path> roots) {
      this.fileRoots = roots.stream().map(p -> p.toAbsolutePath().normalize()).toList();
      return this;
    }

    public Builder eventsDir(Path eventsDir) {
      this.eventsDir = eventsDir.toAbsolutePath().normalize();
      return this;
    }

    public Builder sessionKeys(KeyRing keys) {
      this.sessionKeys = keys;
      return this;
    }

    public Builder adminKeys(KeyRing keys) {
      this.adminKeys = keys;
      return this;
    }

    public Builder defaultTimeout(Duration timeout) {
      this.defaultTimeout = timeout;
      return this;
    }

    public Builder killGrace(Duration grace) {
      this.killGrace = grace;
      return this;
    }

    public Builder outputCapBytes(long bytes) {
      this.outputCapBytes = bytes;
      return this;
    }

    public Builder maxEvents(int count) {
      this.maxEvents = count;
      return this;
    }

    public Builder maxEventAge(Duration age) {
      this.maxEventAge = age;
      return this;
    }

    public Builder maxSpoolBytes(long bytes) {
      this.maxSpoolBytes = bytes;
      return this;
    }

    public Builder maxJsonBytes(long bytes) {
      this.maxJsonBytes = bytes;
      return this;
    }

    public AgentConfig build() {
      // Loopback unless asked: a sandbox that must be reachable from outside says --host.
      String boundHost = host != null ? host : "127.0.0.1";
      Path events =
          eventsDir != null
              ? eventsDir
              : Path.of(
                  System.getProperty("java.io.tmpdir"),
                  "paddock-agent-" + ProcessHandle.current().pid());
      return new AgentConfig(
          boundHost,
          port,
          workspace,
          fileRoots,
          events,
          sessionKeys,
          adminKeys,
          defaultTimeout,
          killGrace,
          outputCapBytes,
          maxEvents,
          maxEventAge,
          maxSpoolBytes,
          maxJsonBytes,
          forkServer,
          runAs,
          home,
          oomCounterFile,
          sandboxId,
          pluginPath);
    }
  }
}
