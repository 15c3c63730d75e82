package dev.paddock.backend.ssh;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.ListedRuntime;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.kit.RuntimeBundle;
import dev.paddock.backend.kit.protocol.AgentSecrets;
import dev.paddock.backend.kit.protocol.AliveProbe;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * Sandboxes on SSH hosts: each is a directory {@code <remote dir>/sandboxes/<id>/} on its host
 * (workspace, events, log and the marker {@code paddock.marker}) and an agent-server started there
 * from the runtime bundle, in its own session and, where the host lets the login create one, its
 * own cgroup. The agent listens on the host's loopback only; the control plane reaches it through a
 * port forward of the host's multiplexed SSH connection. The marker is the truth after a restart:
 * {@link #list} reads every host's markers, {@link #inspect} one.
 *
 * <p>Thread-safe: hosts serialise their one-time preparation, forwards live in a concurrent map,
 * calls for one sandbox are serialised by the control plane.
 */
final class SshBackend implements SandboxBackend {
  static final String NAME = "ssh";
  static final String HOST = "host";

  private static final System.Logger LOG = System.getLogger("paddock.backend.ssh");
  private static final Duration POLL = Duration.ofMillis(10);

  private final SshSettings settings;
  private final Map<String, SshHost> hosts;
  private final Forwards forwards = new Forwards();
  private final AliveProbe alive = new AliveProbe(Duration.ofSeconds(2));
  private final Path controlDir;

  /** Guarded by {@code this}: built on the first start. */
  private AgentBundle bundle;

  private SshBackend(SshSettings settings, Map<String, SshHost> hosts, Path controlDir) {
    this.settings = settings;
    this.hosts = hosts;
    this.controlDir = controlDir;
  }

  /** A backend for the configured hosts; connects lazily, on first use of each host. */
  static SshBackend create(SshSettings settings) {
    try {
      // Control sockets need a short path (sun_path holds 108 bytes) that only we can enter.
      Path controlDir = Files.createTempDirectory("paddock-ssh-");
      Map<String, SshHost> hosts = new LinkedHashMap<>();
      int i = 0;
      for (SshTarget target : settings.hosts()) {
        Path socket = controlDir.resolve("h" + i++);
        hosts.put(
            target.toString(), new SshHost(new SshConnection(target, settings, socket), settings));
      }
      return new SshBackend(settings, hosts, controlDir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the ssh control directory", e);
    }
  }

  @Override
  public String name() {
    return NAME;
  }

  /**
   * Starts the sandbox on the host with the fewest sandboxes; a host that cannot be reached or
   * refuses us is skipped for the next one, and the first such failure is thrown when none is left.
   */
  @Override
  public RuntimeHandle start(RuntimeRequest request) {
    AgentBundle agent = bundle();
    RuntimeStartException first = null;
    for (SshHost host : byLoad()) {
      try {
        return startOn(host, agent, request);
      } catch (SshHostException e) {
        if (!e.failure().isConnection()) {
          throw e.asStartFailure();
        }
        LOG.log(
            System.Logger.Level.WARNING,
            "ssh backend: skipping {0}: {1}",
            host.target(),
            e.getMessage());
        if (first == null) {
          first = e.asStartFailure();
        }
      }
    }
    throw first;
  }

  private List<SshHost> byLoad() {
    return hosts.values().stream()
        .sorted(Comparator.comparingLong(h -> forwards.count(h.connection())))
        .toList();
  }

  private synchronized AgentBundle bundle() {
    if (bundle == null) {
      Path dir = RuntimeBundle.ensure(settings.bundleCache(), settings.agent());
      bundle = new AgentBundle(dir, dir.getFileName().toString());
    }
    return bundle;
  }

  private RuntimeHandle startOn(SshHost host, AgentBundle agent, RuntimeRequest request) {
    host.prepare(agent);
    Resources limits = request.spec().resources();
    SshResult result =
        host.runWithInput(
            SshHost.startInput(
                AgentSecrets.lines(request.sessionKeyDigests(), request.adminKeyDigest()),
                environment(request),
                request.spec().command()),
            settings.readyTimeout().plus(settings.connectTimeout()).plusSeconds(30),
            "start",
            request.sandboxId(),
            agent.key(),
            Long.toString(settings.minFreeDisk() / 1024),
            Long.toString(Math.max(1, settings.readyTimeout().toSeconds())),
            Long.toString(limits.memoryBytes().orElse(0)),
            Long.toString(Math.round(limits.cpus().orElse(0) * 100_000)),
            Integer.toString(limits.pids().orElse(0)));
    if (!result.ok()) {
      throw startFailure(host, result);
    }
    RuntimeHandle handle = handle(host, HostScript.keyValues(result.stdout()), limits);
    try {
      awaitAgent(host, handle);
    } catch (RuntimeException e) {
      try {
        destroy(handle);
      } catch (RuntimeException cleanup) {
        e.addSuppressed(cleanup);
      }
      throw e;
    }
    return handle;
  }

  private static Map<String, String> environment(RuntimeRequest request) {
    Map<String, String> env = new LinkedHashMap<>(request.spec().initialEnv());
    env.putAll(request.env());
    env.keySet().removeIf(name -> !name.matches("[A-Za-z_][A-Za-z0-9_]*"));
    return env;
  }

  private RuntimeStartException startFailure(SshHost host, SshResult result) {
    var reported = HostScript.failure(result.stderr());
    String kind = reported.map(Map.Entry::getKey).orElse("");
    String detail =
        host.target() + ": " + reported.map(Map.Entry::getValue).orElse(result.stderr());
    return switch (kind) {
      case "exited" -> RuntimeStartException.of(Kind.EXITED, detail);
      case "never-ready" -> RuntimeStartException.of(Kind.NEVER_READY, detail);
      case "missing" -> RuntimeStartException.of(Kind.BINARY_MISSING, detail);
      case "disk-full", "unsuitable" -> host.scriptFailure(result).asStartFailure();
      default ->
          RuntimeStartException.of(Kind.UNKNOWN, "exit " + result.exitCode() + ": " + detail);
    };
  }

  private RuntimeHandle handle(SshHost host, Map<String, String> marker, Resources limits) {
    Map<String, String> attributes = new HashMap<>();
    attributes.put(HOST, host.target().toString());
    for (String key : List.of("pid", "start", "port", "cgroup", "freezer", "created")) {
      attributes.put(key, marker.getOrDefault(key, ""));
    }
    attributes.put(
        RuntimeHandle.UNENFORCED, unenforced(limits, marker.getOrDefault("enforced", "")));
    return new RuntimeHandle(marker.get("paddock.sandbox-id"), NAME, attributes);
  }

  private static String unenforced(Resources limits, String enforced) {
    List<String> done = List.of(enforced.split(" "));
    List<String> missing = new ArrayList<>();
    if (limits.memoryBytes().isPresent() && !done.contains("memory")) {
      missing.add("memory");
    }
    if (limits.cpus().isPresent() && !done.contains("cpus")) {
      missing.add("cpus");
    }
    if (limits.pids().isPresent() && !done.contains("pids")) {
      missing.add("pids");
    }
    if (limits.diskBytes().isPresent()) {
      missing.add("disk");
    }
    return String.join(",", missing);
  }

  /** Forwards the agent's port and waits until it answers through the forward. */
  private int awaitAgent(SshHost host, RuntimeHandle handle) {
    int local = forwards.ensure(handle.sandboxId(), host.connection(), port(handle));
    Instant deadline = Instant.now().plus(settings.readyTimeout());
    while (!alive.answers(local)) {
      if (Instant.now().isAfter(deadline)) {
        throw RuntimeStartException.of(
            Kind.NEVER_READY,
            host.target()
                + ": the agent did not answer through the forward within "
                + settings.readyTimeout(),
            null);
      }
      LockSupport.parkNanos(POLL.toNanos());
    }
    return local;
  }

  private static int port(RuntimeHandle handle) {
    return Integer.parseInt(
        handle.attributes().getOrDefault("port", "0").isBlank()
            ? "0"
            : handle.attributes().get("port"));
  }

  @Override
  public RuntimeState inspect(RuntimeHandle handle) {
    if (handle.attributes().getOrDefault(HOST, "").isBlank()) {
      return RuntimeState.missing(); // a handle naming no host names no runtime
    }
    Optional<SshHost> host = host(handle);
    if (host.isEmpty()) {
      return error(
          Kind.ENGINE_UNREACHABLE,
          "host " + handle.attributes().get(HOST) + " is not in ssh.hosts");
    }
    try {
      SshResult result = host.get().run("inspect", handle.sandboxId());
      if (!result.ok()) {
        return error(Kind.UNKNOWN, host.get().target() + ": " + result.stderr().strip());
      }
      return state(host.get(), handle.sandboxId(), HostScript.keyValues(result.stdout()));
    } catch (SshHostException e) {
      return error(e.failure().kind(), e.getMessage());
    }
  }

  private RuntimeState state(SshHost host, String sandboxId, Map<String, String> marker) {
    switch (marker.getOrDefault("state", "missing")) {
      case "alive" -> {
        return running(host, sandboxId, marker);
      }
      case "frozen" -> {
        return new RuntimeState(SandboxStatus.PAUSED, List.of(), Optional.empty());
      }
      default -> {
        forwards.remove(sandboxId);
        return RuntimeState.missing();
      }
    }
  }

  private RuntimeState running(SshHost host, String sandboxId, Map<String, String> marker) {
    int port = Integer.parseInt(marker.getOrDefault("port", "0"));
    if (port == 0) {
      return late(marker)
          ? error(
              Kind.NEVER_READY,
              host.target() + ": agent of " + sandboxId + " never reported its port")
          : new RuntimeState(SandboxStatus.STARTING, List.of(), Optional.empty());
    }
    int local = forwards.ensure(sandboxId, host.connection(), port);
    if (!alive.answers(local)) {
      return new RuntimeState(SandboxStatus.STARTING, List.of(), Optional.empty());
    }
    String url = "http://127.0.0.1:" + local;
    return new RuntimeState(
        SandboxStatus.RUNNING,
        List.of(new ExposedUrl(ExposedUrl.AGENT_SERVER, url, port)),
        Optional.empty());
  }

  private boolean late(Map<String, String> marker) {
    long created = Long.parseLong(marker.getOrDefault("created", "0"));
    return Instant.ofEpochSecond(created).plus(settings.readyTimeout()).isBefore(Instant.now());
  }

  private static RuntimeState error(Kind kind, String detail) {
    return new RuntimeState(
        SandboxStatus.ERROR, List.of(), Optional.of(new RuntimeFailure(kind, detail)));
  }

  /**
   * Freezes every process of the sandbox (its cgroup, else SIGSTOP to the agent, its descendants
   * and every process labelled with the sandbox id).
   *
   * @throws SandboxException when the sandbox's agent is gone
   */
  @Override
  public void pause(RuntimeHandle handle) {
    SshHost host = requiredHost(handle);
    SshResult result = host.run("pause", handle.sandboxId());
    if (!result.ok()) {
      throw notRunning(handle, "paused", result);
    }
  }

  @Override
  public RuntimeHandle resume(RuntimeHandle handle) {
    SshHost host = requiredHost(handle);
    SshResult result;
    try {
      result = host.run("resume", handle.sandboxId());
    } catch (SshHostException e) {
      throw e.asStartFailure();
    }
    if (!result.ok()) {
      throw RuntimeStartException.of(Kind.EXITED, host.target() + ": " + result.stderr().strip());
    }
    awaitAgent(host, handle);
    return handle;
  }

  /** Kills the sandbox's processes (TERM, grace, KILL), removes its cgroup and directory. */
  @Override
  public void destroy(RuntimeHandle handle) {
    SshHost host = requiredHost(handle);
    forwards.remove(handle.sandboxId());
    SshResult result =
        host.runWithInput(
            new byte[0],
            settings.stopGrace().plusSeconds(60),
            "destroy",
            handle.sandboxId(),
            Long.toString(Math.max(0, settings.stopGrace().toSeconds())));
    if (!result.ok()) {
      throw new SandboxException(
          "Sandbox " + handle.sandboxId() + " could not be removed from its host; try again.",
          Optional.of(handle.sandboxId()),
          new IllegalStateException(host.target() + ": " + result.stderr().strip()));
    }
  }

  /**
   * Every sandbox whose marker names a live (or frozen) agent, on every host that answers; a host
   * that does not is logged and skipped (its sandboxes are not lost: they are inspected again).
   */
  @Override
  public List<RuntimeHandle> list() {
    return listWithState().stream().map(ListedRuntime::handle).toList();
  }

  /** One {@code list} call per host for all its sandboxes, instead of one call per sandbox. */
  @Override
  public List<ListedRuntime> listWithState() {
    List<ListedRuntime> listed = new ArrayList<>();
    for (SshHost host : hosts.values()) {
      try {
        listed.addAll(listOn(host));
      } catch (SshHostException e) {
        LOG.log(
            System.Logger.Level.WARNING,
            "ssh backend: cannot list {0}: {1}",
            host.target(),
            e.getMessage());
      }
    }
    return listed;
  }

  private List<ListedRuntime> listOn(SshHost host) {
    SshResult result = host.run("list");
    if (!result.ok()) {
      throw host.scriptFailure(result);
    }
    List<ListedRuntime> listed = new ArrayList<>();
    for (Map<String, String> marker : HostScript.records(result.stdout())) {
      String state = marker.getOrDefault("state", "missing");
      RuntimeHandle handle = handle(host, marker, Resources.NONE);
      if (state.equals("alive") || state.equals("frozen")) {
        listed.add(new ListedRuntime(handle, state(host, handle.sandboxId(), marker)));
      } else if (marker.getOrDefault("port", "").isEmpty() && late(marker)) {
        // A start cut short before the agent served: nothing ever ran in it, so it goes now.
        destroy(handle);
      }
    }
    return listed;
  }

  private Optional<SshHost> host(RuntimeHandle handle) {
    return Optional.ofNullable(hosts.get(handle.attributes().getOrDefault(HOST, "")));
  }

  private SshHost requiredHost(RuntimeHandle handle) {
    return host(handle)
        .orElseThrow(
            () ->
                new SandboxException(
                    "Sandbox "
                        + handle.sandboxId()
                        + " is on a host this control plane no longer"
                        + " has in ssh.hosts.",
                    Optional.of(handle.sandboxId())));
  }

  private static SandboxException notRunning(
      RuntimeHandle handle, String operation, SshResult result) {
    return new SandboxException(
        "Sandbox " + handle.sandboxId() + " is not running, so it cannot be " + operation + ".",
        Optional.of(handle.sandboxId()),
        new IllegalStateException(result.stderr().strip()));
  }

  /** Ends every master connection (and so every forward); sandboxes keep running on their hosts. */
  @Override
  public void close() {
    hosts.values().forEach(SshHost::close);
    try (var left = Files.list(controlDir)) {
      for (Path p : left.toList()) {
        Files.deleteIfExists(p);
      }
      Files.deleteIfExists(controlDir);
    } catch (IOException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "ssh backend: cannot remove {0}: {1}",
          controlDir,
          e.getMessage());
    }
  }
}
