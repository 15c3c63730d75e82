package dev.paddock.backend.docker;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.backend.kit.RuntimeBundle;
import dev.paddock.backend.kit.protocol.AgentSecrets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * The Engine's create body for a sandbox's container: the agent from the read-only bundle as root
 * with a small capability set, commands as the run-as user, the workspace on the sandbox's own
 * labelled volume, the spec's limits (else the backend's defaults), and in bridge mode the agent's
 * and worker ports published on the bind address. Also names the container and its volume.
 */
final class ContainerSpec {
  static final String LABEL_MANAGED = "paddock.managed";
  static final String LABEL_SANDBOX = "paddock.sandbox-id";
  static final String LABEL_SPEC = "paddock.spec-id";
  static final String LABEL_ADMIN = "paddock.admin-key-sha256";
  static final String LABEL_NETWORK = "paddock.network";
  static final String LABEL_INSTANCE = "paddock.instance";
  static final String LABEL_UNENFORCED = "paddock.unenforced";

  private static final System.Logger LOG = System.getLogger("paddock.backend.docker");
  private static final Pattern NAME_UNSAFE = Pattern.compile("[^a-zA-Z0-9_.-]");
  private static final String EVENTS_DIR = "/var/lib/paddock-agent/events";
  private static final String HOME_DIR = "/home/paddock";

  private final DockerSettings settings;
  private final Path bundle;
  private final EngineFeatures features;

  ContainerSpec(DockerSettings settings, Path bundle, EngineFeatures features) {
    this.settings = settings;
    this.bundle = bundle;
    this.features = features;
  }

  static String containerName(String sandboxId) {
    return "paddock-" + NAME_UNSAFE.matcher(sandboxId).replaceAll("_");
  }

  /**
   * The name a stopped container of an image's own agent-server takes when the sandbox is paused
   * (the engine records no reason for a stop): a stop Paddock made reads as PAUSED, any other as a
   * crash.
   */
  static String pausedName(String sandboxId) {
    return containerName(sandboxId) + "-paused";
  }

  /** The workspace volume: kept while the container is, so a crashed sandbox keeps its files. */
  static String volumeName(String sandboxId) {
    return containerName(sandboxId) + "-workspace";
  }

  static String workspace(SandboxSpec spec) {
    String dir = spec.workingDir();
    return dir.isBlank() || dir.equals(".") ? "/workspace" : dir;
  }

  /** The labels that find a sandbox's container and volume from the moment they exist. */
  Map<String, String> ownership(String sandboxId) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(LABEL_MANAGED, "true");
    labels.put(LABEL_SANDBOX, sandboxId);
    labels.put(LABEL_INSTANCE, settings.instance());
    return labels;
  }

  Map<String, Object> body(RuntimeRequest request, String image) {
    SandboxSpec spec = request.spec();
    String workspace = workspace(spec);
    boolean own = AgentServerLaunch.applies(spec);
    Map<String, Object> labels = labels(request);
    Map<String, Object> host = hostConfig(request.sandboxId(), workspace, own);
    if (!limits(spec, host)) {
      // Read back into every handle of this container, also after a control-plane restart.
      labels.put(LABEL_UNENFORCED, "disk");
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("Image", image);
    if (own) {
      imageAgent(request, body, labels);
    } else {
      body.put("Entrypoint", List.of("/bin/sh", RuntimeBundle.MOUNT + "/bin/paddock-sandbox"));
      body.put("Cmd", agentArgs(spec, workspace));
      body.put("Env", env(request));
      body.put("User", "0:0");
      body.put("OpenStdin", true);
      body.put("StdinOnce", true);
      body.put("AttachStdin", true);
      body.put("AttachStdout", true);
      body.put("AttachStderr", true);
    }
    body.put("Labels", labels);
    body.put("WorkingDir", workspace);
    body.put("Tty", false);
    if (!settings.hostNetwork()) {
      body.put("ExposedPorts", exposedPorts(own));
    }
    body.put("HostConfig", host);
    return body;
  }

  // The image's entry point and user, the spec's command as its arguments, the launch contract's
  // variables; the agent port is labelled so a restarted control plane finds it.
  private void imageAgent(
      RuntimeRequest request, Map<String, Object> body, Map<String, Object> labels) {
    Map<String, String> variables = new LinkedHashMap<>(request.spec().initialEnv());
    variables.putAll(request.env());
    Map<String, Integer> ports = AgentServerLaunch.ports(variables, settings.hostNetwork());
    if (!request.spec().command().isEmpty()) {
      body.put("Cmd", request.spec().command());
    }
    body.put("Env", AgentServerLaunch.env(request, ports, settings));
    labels.put(AgentServerLaunch.LABEL_AGENT_SERVER, AgentServerLaunch.IMAGE);
    labels.put(AgentServerLaunch.LABEL_AGENT_PORTS, AgentServerLaunch.label(ports));
  }

  private Map<String, Object> labels(RuntimeRequest request) {
    Map<String, Object> labels = new LinkedHashMap<>(ownership(request.sandboxId()));
    labels.put(LABEL_SPEC, request.spec().id());
    labels.put(LABEL_NETWORK, settings.network());
    if (!request.adminKeyDigest().isEmpty()) {
      // A digest, not a key: it lets a restarted container take its admin key again.
      labels.put(LABEL_ADMIN, AgentSecrets.checkedDigest(request.adminKeyDigest()));
    }
    return labels;
  }

  // The spec's variables, then the request's over them (the same name given twice would leave the
  // engine to pick one).
  private List<String> env(RuntimeRequest request) {
    Map<String, String> variables = new LinkedHashMap<>(request.spec().initialEnv());
    variables.putAll(request.env());
    List<String> env = new ArrayList<>();
    variables.forEach((k, v) -> env.add(k + "=" + v));
    env.add("PADDOCK_MANAGED=true");
    env.add("PADDOCK_SANDBOX_ID=" + request.sandboxId());
    settings.callbackUrl().ifPresent(url -> env.add("PADDOCK_CALLBACK_URL=" + url));
    return env;
  }

  private List<String> agentArgs(SandboxSpec spec, String workspace) {
    List<String> args = new ArrayList<>();
    if (settings.hostNetwork()) {
      args.addAll(List.of("--host", "127.0.0.1", "--port", "0"));
    } else {
      args.addAll(
          List.of("--host", "0.0.0.0", "--port", Integer.toString(DockerSettings.AGENT_PORT)));
    }
    args.addAll(List.of("--workspace", workspace, "--events-dir", EVENTS_DIR, "--secrets-stdin"));
    // Commands run as the unprivileged user; the file routes reach the workspace, its home and
    // /tmp (the README's `paddock cp notes.txt ID:/tmp/notes.txt`), which the user may write too.
    // The agent's own files are under /var/lib/paddock-agent and /opt/paddock, outside them all.
    args.addAll(List.of("--run-as", settings.runAs(), "--home", HOME_DIR));
    args.addAll(List.of("--file-root", workspace, "--file-root", HOME_DIR, "--file-root", "/tmp"));
    args.addAll(spec.command());
    return args;
  }

  private Map<String, Object> hostConfig(String sandboxId, String workspace, boolean own) {
    Map<String, Object> host = new LinkedHashMap<>();
    host.put("NetworkMode", settings.hostNetwork() ? "host" : "bridge");
    settings.runtime().ifPresent(runtime -> host.put("Runtime", runtime));
    // An image's own agent-server gets no bundle: nothing of Paddock's runs in its container.
    host.put(
        "Mounts",
        own
            ? List.of(workspaceMount(sandboxId, workspace))
            : List.of(bundleMount(), workspaceMount(sandboxId, workspace)));
    host.put("CapDrop", List.of("ALL"));
    // The agent (root in the container) needs these to run commands as the run-as user and to
    // manage the files they own; commands themselves get none (setpriv clears them).
    host.put(
        "CapAdd",
        List.of("CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETUID", "SETGID", "SETPCAP"));
    host.put("SecurityOpt", List.of("no-new-privileges"));
    // A real init as pid 1 reaps orphaned processes: zombies would otherwise hold pids (and count
    // against the pids limit) forever, since the agent only waits for its own children.
    host.put("Init", true);
    host.put(
        "LogConfig",
        Map.of("Type", "json-file", "Config", Map.of("max-size", "1m", "max-file", "1")));
    if (!settings.hostNetwork()) {
      host.put("PortBindings", portBindings(own));
      host.put("ExtraHosts", List.of("host.docker.internal:host-gateway"));
    }
    return host;
  }

  private Map<String, Object> bundleMount() {
    return Map.of(
        "Type",
        "bind",
        "Source",
        bundle.toString(),
        "Target",
        RuntimeBundle.MOUNT,
        "ReadOnly",
        true);
  }

  // A named volume (created with the sandbox's labels before the container): the image's files at
  // that path are copied into it on first mount, as with an anonymous volume.
  private static Map<String, Object> workspaceMount(String sandboxId, String workspace) {
    return Map.of("Type", "volume", "Source", volumeName(sandboxId), "Target", workspace);
  }

  private Map<String, Object> exposedPorts(boolean own) {
    Map<String, Object> exposed = new LinkedHashMap<>();
    containerPorts(own).forEach(port -> exposed.put(port + "/tcp", Map.of()));
    return exposed;
  }

  // HostPort "" lets the engine choose a free port as it binds: no bind-then-close race.
  private Map<String, Object> portBindings(boolean own) {
    Map<String, Object> bindings = new LinkedHashMap<>();
    for (int port : containerPorts(own)) {
      bindings.put(
          port + "/tcp", List.of(Map.of("HostIp", settings.bindAddress(), "HostPort", "")));
    }
    return bindings;
  }

  private List<Integer> containerPorts(boolean own) {
    if (own) {
      return List.copyOf(AgentServerLaunch.PORTS.values());
    }
    List<Integer> ports = new ArrayList<>();
    ports.add(DockerSettings.AGENT_PORT);
    ports.addAll(settings.workerPorts());
    return ports;
  }

  /** Writes the spec's limits; false when a disk limit was asked for that cannot be enforced. */
  private boolean limits(SandboxSpec spec, Map<String, Object> host) {
    Resources defaults = settings.resources();
    Resources resources = spec.resources();
    OptionalLong memory = or(resources.memoryBytes(), defaults.memoryBytes());
    memory.ifPresent(
        bytes -> {
          host.put("Memory", bytes);
          host.put("MemorySwap", bytes); // no swap beyond the limit
        });
    var cpus = resources.cpus().isPresent() ? resources.cpus() : defaults.cpus();
    cpus.ifPresent(c -> host.put("NanoCpus", Math.round(c * 1e9)));
    var pids = resources.pids().isPresent() ? resources.pids() : defaults.pids();
    pids.ifPresent(p -> pidsLimit(p, host));
    OptionalLong disk = or(resources.diskBytes(), defaults.diskBytes());
    if (disk.isEmpty()) {
      return true;
    }
    if (!features.diskLimits()) {
      LOG.log(
          System.Logger.Level.WARNING,
          "docker backend: a disk limit was asked for, but the engine's storage driver cannot"
              + " enforce one (overlay2 needs xfs with pquota); the sandbox runs without it");
      return false;
    }
    host.put("StorageOpt", Map.of("size", Long.toString(disk.getAsLong())));
    return true;
  }

  // Under runc the engine's pids cgroup holds the sandbox's own tasks, so its limit is the user's.
  // Under gVisor that cgroup holds gVisor's kernel instead: the Sentry's threads and, on the ptrace
  // platform, a host stub thread for every pair of address space and Sentry thread, which grows far
  // faster than the tasks inside, and a Sentry that cannot create a thread ends the sandbox. There
  // the user's limit is an RLIMIT_NPROC the Sentry enforces per user on every clone (EAGAIN, as in
  // Linux), and the host cgroup gets the wide safety net of GvisorPids.
  private void pidsLimit(int limit, Map<String, Object> host) {
    if (settings.runtime().filter(features::gvisor).isEmpty()) {
      host.put("PidsLimit", limit);
      return;
    }
    host.put("Ulimits", List.of(Map.of("Name", "nproc", "Soft", limit, "Hard", limit)));
    host.put("PidsLimit", GvisorPids.hostLimit(limit));
  }

  private static OptionalLong or(OptionalLong value, OptionalLong fallback) {
    return value.isPresent() ? value : fallback;
  }
}
