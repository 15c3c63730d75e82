package dev.paddock.backend.docker;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.AgentSecrets;
import dev.paddock.api.spi.AliveProbe;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.RuntimeStats;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.docker.DockerEngine.EngineException;
import dev.paddock.backend.docker.DockerEngine.Hijacked;
import dev.paddock.backend.docker.DockerEngine.Response;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Sandboxes as Docker containers, one per sandbox, through the Engine API. The agent-server comes
 * from the {@link RuntimeBundle} mounted read-only, runs as root inside the container with a small
 * capability set, and runs every command as the unprivileged {@code run-as} user. The workspace is
 * an anonymous volume, removed with the container. Limits (memory without swap, CPUs, pids, disk
 * where the storage driver allows) come from the spec, else from the backend's defaults.
 *
 * <p>Everything is found again through labels ({@code paddock.managed}, {@code paddock.sandbox-id},
 * {@code paddock.spec-id}) and the container's own state, so a restarted control plane lists,
 * inspects, pauses and destroys what an earlier one started. Thread-safe; calls for one sandbox are
 * serialised by the control plane.
 */
final class DockerBackend implements SandboxBackend {
  static final String NAME = "docker";
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
  private static final int RETRIES = 20;

  private final DockerSettings settings;
  private final DockerEngine engine;
  private final Path bundle;
  private final AliveProbe probe = new AliveProbe(Duration.ofSeconds(1));
  private final ScheduledExecutorService watchdog;
  private final Set<String> starting = ConcurrentHashMap.newKeySet();
  private volatile Boolean diskLimits;

  DockerBackend(DockerSettings settings, DockerEngine engine, Path bundle) {
    this.settings = settings;
    this.engine = engine;
    this.bundle = bundle;
    this.watchdog =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "paddock-docker-watchdog");
              t.setDaemon(true);
              return t;
            });
  }

  @Override
  public String name() {
    return NAME;
  }

  DockerEngine engine() {
    return engine;
  }

  // ---------------------------------------------------------------- start

  @Override
  public RuntimeHandle start(RuntimeRequest request) {
    String secrets = AgentSecrets.lines(request.sessionKeyDigests(), request.adminKeyDigest());
    String image = request.spec().imageReference();
    starting.add(request.sandboxId());
    try {
      ensureImage(image);
      String container = create(request, image);
      try {
        return launch(request.sandboxId(), container, secrets);
      } catch (RuntimeException e) {
        RuntimeStartException failure = asStartFailure(e, "starting " + container);
        removeQuietly(container, failure);
        throw failure;
      }
    } catch (EngineException e) {
      throw failure(Kind.ENGINE_UNREACHABLE, e.getMessage(), e);
    } finally {
      starting.remove(request.sandboxId());
    }
  }

  /** Attaches, starts, hands over the key digests, waits for the ready line. */
  private RuntimeHandle launch(String sandboxId, String container, String secrets) {
    long deadline = System.nanoTime() + settings.readyTimeout().toNanos();
    try (Hijacked attach =
        engine.hijack("/containers/" + container + "/attach?stream=1&stdin=1&stdout=1&stderr=1")) {
      Response started = engine.post("/containers/" + container + "/start", null);
      if (!started.ok() && started.status() != 304) {
        throw startRefused(started);
      }
      try {
        attach.input().write(secrets.getBytes(StandardCharsets.UTF_8));
        attach.closeInput();
      } catch (IOException e) {
        // The agent is already gone: the output tells how.
        LOG.log(System.Logger.Level.DEBUG, "sandbox {0}: stdin closed early: {1}", sandboxId, e);
      }
      ContainerOutput output = new ContainerOutput(attach.output());
      OptionalInt port = awaitReady(attach, output, deadline);
      if (port.isEmpty()) {
        throw exitedBeforeReady(container, output.tail(), deadline);
      }
      Map<String, Object> state = inspectJson(container).orElseThrow(() -> vanished(container));
      return handle(sandboxId, container, state, port.getAsInt());
    }
  }

  private OptionalInt awaitReady(Hijacked attach, ContainerOutput output, long deadline) {
    long left = deadline - System.nanoTime();
    ScheduledFuture<?> alarm =
        watchdog.schedule(attach::close, Math.max(1, left), TimeUnit.NANOSECONDS);
    try {
      return output.awaitReady();
    } catch (IOException e) {
      if (System.nanoTime() - deadline >= 0) {
        throw failure(
            Kind.NEVER_READY,
            "agent printed no ready line within "
                + settings.readyTimeout().toMillis()
                + " ms"
                + tailDetail(output.tail()),
            null);
      }
      return OptionalInt.empty();
    } finally {
      alarm.cancel(false);
    }
  }

  /** The output ended: the container stopped (or never will say it is ready). */
  private RuntimeStartException exitedBeforeReady(
      String container, List<String> tail, long deadline) {
    if (System.nanoTime() - deadline >= 0) {
      return failure(
          Kind.NEVER_READY,
          "agent printed no ready line within "
              + settings.readyTimeout().toMillis()
              + " ms"
              + tailDetail(tail),
          null);
    }
    Map<String, Object> state = awaitStopped(container, deadline);
    Map<String, Object> s = map(state.get("State"));
    int code = ((Number) s.getOrDefault("ExitCode", -1)).intValue();
    boolean oom = Boolean.TRUE.equals(s.get("OOMKilled"));
    return failure(
        exitKind(code, oom, tail),
        "container "
            + container
            + " exited with code "
            + code
            + (oom ? " (OOM-killed)" : "")
            + tailDetail(tail),
        null);
  }

  static Kind exitKind(int code, boolean oom, List<String> tail) {
    if (oom) {
      return Kind.OUT_OF_MEMORY;
    }
    Optional<Kind> read = FailureText.classify(tail);
    if (read.isPresent()) {
      return read.get();
    }
    return switch (code) {
      case 121, 122, 123, 126, 127 -> Kind.IMAGE_UNSUITABLE;
      case 124 -> Kind.CALLBACK_UNREACHABLE;
      default ->
          tail.stream().anyMatch(DockerBackend::isBindFailure) ? Kind.PORT_TAKEN : Kind.EXITED;
    };
  }

  private Map<String, Object> awaitStopped(String container, long deadline) {
    Map<String, Object> state = Map.of();
    for (int i = 0; i < 50; i++) {
      state = inspectJson(container).orElseThrow(() -> vanished(container));
      String status = String.valueOf(map(state.get("State")).get("Status"));
      if (!status.equals("running") || System.nanoTime() - deadline >= 0) {
        return state;
      }
      sleep(Duration.ofMillis(20));
    }
    return state;
  }

  private RuntimeStartException startRefused(Response response) {
    String message = response.message();
    String lower = message.toLowerCase(Locale.ROOT);
    Kind kind;
    Optional<Kind> read = FailureText.classify(message);
    if (read.isPresent()) {
      kind = read.get();
    } else if (lower.contains("port is already allocated")
        || lower.contains("address already in use")
        || lower.contains("no available port")) {
      kind = Kind.PORT_TAKEN;
    } else if (lower.contains("no such file or directory")
        || lower.contains("executable file not found")) {
      kind = Kind.IMAGE_UNSUITABLE;
    } else if (lower.contains("out of memory") || lower.contains("oom")) {
      kind = Kind.OUT_OF_MEMORY;
    } else {
      kind = Kind.UNKNOWN;
    }
    return failure(kind, "the engine refused to start the container: " + message, null);
  }

  private void ensureImage(String image) {
    Response found = engine.get("/images/" + image + "/json");
    if (found.ok()) {
      return;
    }
    if (found.status() != 404) {
      throw failure(Kind.UNKNOWN, "image inspect of " + image + ": " + found.message(), null);
    }
    if (settings.pull().equals("missing")) {
      pull(image);
      if (engine.get("/images/" + image + "/json").ok()) {
        return;
      }
    }
    throw failure(Kind.IMAGE_MISSING, "image " + image + " is not present on the engine", null);
  }

  private void pull(String image) {
    int at = image.lastIndexOf('@');
    int colon = image.lastIndexOf(':');
    String query;
    if (at < 0 && colon > image.lastIndexOf('/')) {
      query =
          "fromImage=" + enc(image.substring(0, colon)) + "&tag=" + enc(image.substring(colon + 1));
    } else if (at >= 0) {
      query = "fromImage=" + enc(image);
    } else {
      // Without a tag the engine would pull every tag of the repository.
      query = "fromImage=" + enc(image) + "&tag=latest";
    }
    LOG.log(System.Logger.Level.INFO, "docker backend: pulling {0}", image);
    try {
      // Pulls take as long as the image is big: minutes, not the usual call limit.
      Response response =
          engine.call("POST", "/images/create?" + query, new byte[0], null, Duration.ofMinutes(30));
      if (!response.ok()) {
        LOG.log(System.Logger.Level.WARNING, "pull of {0} failed: {1}", image, response.message());
      }
    } catch (EngineException e) {
      throw e;
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "pull of {0} failed: {1}", image, e.toString());
    }
  }

  /** Creates the container (not started); its name and labels tie it to the sandbox. */
  private String create(RuntimeRequest request, String image) {
    String name = containerName(request.sandboxId());
    Map<String, Object> body = containerBody(request, image);
    Response created;
    try {
      created = engine.post("/containers/create?name=" + enc(name), body);
    } catch (EngineException e) {
      // The engine may have made the container and lost only its answer: remove it if it is ours.
      removeIfUnstarted(name, request.sandboxId(), e);
      throw e;
    }
    if (created.status() == 409) {
      // Never removed here: it may be a live sandbox with this id.
      throw failure(Kind.UNKNOWN, "container " + name + " already exists", null);
    }
    if (created.status() == 404) {
      throw failure(Kind.IMAGE_MISSING, "create: " + created.message(), null);
    }
    if (!created.ok()) {
      Kind kind = FailureText.classify(created.message()).orElse(Kind.UNKNOWN);
      throw failure(kind, "create refused: " + created.message(), null);
    }
    String id = String.valueOf(created.json().get("Id"));
    Object warnings = created.json().get("Warnings");
    if (warnings instanceof List<?> list && !list.isEmpty()) {
      String text = String.valueOf(list).toLowerCase(Locale.ROOT);
      if (text.contains("limit") || text.contains("discarded") || text.contains("swap")) {
        // e.g. "Your kernel does not support memory limitation or the cgroup is not mounted.
        // Limitation discarded.": the sandbox would run without the limits it was promised.
        RuntimeStartException failure =
            failure(
                Kind.UNKNOWN, "the engine would not enforce the sandbox's limits: " + list, null);
        removeQuietly(id, failure);
        throw failure;
      }
      LOG.log(System.Logger.Level.WARNING, "docker backend: create of {0} warned: {1}", name, list);
    }
    return id;
  }

  Map<String, Object> containerBody(RuntimeRequest request, String image) {
    SandboxSpec spec = request.spec();
    String workspace = workspace(spec);
    Map<String, Object> labels = new LinkedHashMap<>();
    labels.put(LABEL_MANAGED, "true");
    labels.put(LABEL_SANDBOX, request.sandboxId());
    labels.put(LABEL_SPEC, spec.id());
    labels.put(LABEL_NETWORK, settings.network());
    labels.put(LABEL_INSTANCE, settings.instance());
    if (!request.adminKeyDigest().isEmpty()) {
      // A digest, not a key: it lets a restarted container take its admin key again.
      labels.put(LABEL_ADMIN, AgentSecrets.checkedDigest(request.adminKeyDigest()));
    }
    // The spec's variables, then the request's over them (the same name given twice would leave
    // the engine to pick one).
    Map<String, String> variables = new LinkedHashMap<>(spec.initialEnv());
    variables.putAll(request.env());
    List<String> env = new ArrayList<>();
    variables.forEach((k, v) -> env.add(k + "=" + v));
    env.add("PADDOCK_MANAGED=true");
    env.add("PADDOCK_SANDBOX_ID=" + request.sandboxId());
    settings.callbackUrl().ifPresent(url -> env.add("PADDOCK_CALLBACK_URL=" + url));

    List<String> args = new ArrayList<>();
    if (settings.hostNetwork()) {
      args.addAll(List.of("--host", "127.0.0.1", "--port", "0"));
    } else {
      args.addAll(
          List.of("--host", "0.0.0.0", "--port", Integer.toString(DockerSettings.AGENT_PORT)));
    }
    args.addAll(List.of("--workspace", workspace, "--events-dir", EVENTS_DIR, "--secrets-stdin"));
    // Commands run as the unprivileged user; the file routes reach the workspace and its home only.
    args.addAll(
        List.of(
            "--run-as",
            settings.runAs(),
            "--home",
            HOME_DIR,
            "--file-root",
            workspace,
            "--file-root",
            HOME_DIR));
    args.addAll(spec.command());

    Map<String, Object> host = new LinkedHashMap<>();
    host.put("NetworkMode", settings.hostNetwork() ? "host" : "bridge");
    host.put(
        "Mounts",
        List.of(
            Map.of(
                "Type",
                "bind",
                "Source",
                bundle.toString(),
                "Target",
                RuntimeBundle.MOUNT,
                "ReadOnly",
                true)));
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
    if (!limits(spec, host)) {
      // Read back into every handle of this container, also after a control-plane restart.
      labels.put(LABEL_UNENFORCED, "disk");
    }
    Map<String, Object> exposed = new LinkedHashMap<>();
    if (!settings.hostNetwork()) {
      Map<String, Object> bindings = new LinkedHashMap<>();
      for (int port : containerPorts()) {
        exposed.put(port + "/tcp", Map.of());
        // HostPort "" lets the engine choose a free port as it binds: no bind-then-close race.
        bindings.put(
            port + "/tcp", List.of(Map.of("HostIp", settings.bindAddress(), "HostPort", "")));
      }
      host.put("PortBindings", bindings);
      host.put("ExtraHosts", List.of("host.docker.internal:host-gateway"));
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("Image", image);
    body.put("Entrypoint", List.of("/bin/sh", RuntimeBundle.MOUNT + "/bin/paddock-sandbox"));
    body.put("Cmd", args);
    body.put("Env", env);
    body.put("Labels", labels);
    body.put("User", "0:0");
    body.put("WorkingDir", workspace);
    body.put("Volumes", Map.of(workspace, Map.of()));
    body.put("OpenStdin", true);
    body.put("StdinOnce", true);
    body.put("AttachStdin", true);
    body.put("AttachStdout", true);
    body.put("AttachStderr", true);
    body.put("Tty", false);
    if (!exposed.isEmpty()) {
      body.put("ExposedPorts", exposed);
    }
    body.put("HostConfig", host);
    return body;
  }

  /** Writes the spec's limits; false when a disk limit was asked for that cannot be enforced. */
  private boolean limits(SandboxSpec spec, Map<String, Object> host) {
    Resources defaults = settings.resources();
    var resources = spec.resources();
    var memory =
        resources.memoryBytes().isPresent() ? resources.memoryBytes() : defaults.memoryBytes();
    memory.ifPresent(
        bytes -> {
          host.put("Memory", bytes);
          host.put("MemorySwap", bytes); // no swap beyond the limit
        });
    var cpus = resources.cpus().isPresent() ? resources.cpus() : defaults.cpus();
    cpus.ifPresent(c -> host.put("NanoCpus", Math.round(c * 1e9)));
    var pids = resources.pids().isPresent() ? resources.pids() : defaults.pids();
    pids.ifPresent(p -> host.put("PidsLimit", p));
    var disk = resources.diskBytes().isPresent() ? resources.diskBytes() : defaults.diskBytes();
    if (disk.isPresent()) {
      if (diskLimitsSupported()) {
        host.put("StorageOpt", Map.of("size", Long.toString(disk.getAsLong())));
      } else {
        LOG.log(
            System.Logger.Level.WARNING,
            "docker backend: a disk limit was asked for, but the engine's storage driver cannot"
                + " enforce one (overlay2 needs xfs with pquota); the sandbox runs without it");
        return false;
      }
    }
    return true;
  }

  /**
   * overlay2 on xfs (with pquota) is the common driver that enforces {@code --storage-opt size}.
   */
  private boolean diskLimitsSupported() {
    Boolean known = diskLimits;
    if (known == null) {
      Map<String, Object> info = engine.get("/info").json();
      String driver = String.valueOf(info.get("Driver"));
      boolean xfs =
          String.valueOf(info.get("DriverStatus")).toLowerCase(Locale.ROOT).contains("xfs");
      known =
          (driver.equals("overlay2") && xfs)
              || driver.equals("devicemapper")
              || driver.equals("zfs")
              || driver.equals("btrfs");
      diskLimits = known;
    }
    return known;
  }

  private List<Integer> containerPorts() {
    List<Integer> ports = new ArrayList<>();
    ports.add(DockerSettings.AGENT_PORT);
    ports.addAll(settings.workerPorts());
    return ports;
  }

  static String workspace(SandboxSpec spec) {
    String dir = spec.workingDir();
    return dir == null || dir.isBlank() || dir.equals(".") ? "/workspace" : dir;
  }

  static String containerName(String sandboxId) {
    return "paddock-" + NAME_UNSAFE.matcher(sandboxId).replaceAll("_");
  }

  // ---------------------------------------------------------------- handles and state

  private RuntimeHandle handle(
      String sandboxId, String container, Map<String, Object> state, int readyPort) {
    Map<String, String> attributes = new LinkedHashMap<>();
    attributes.put("container", container);
    attributes.put("network", settings.hostNetwork() ? "host" : "bridge");
    unenforced(state).ifPresent(limits -> attributes.put(RuntimeHandle.UNENFORCED, limits));
    if (hostNetwork(state)) {
      attributes.put("port", Integer.toString(readyPort));
    } else {
      Map<Integer, Integer> published = publishedPorts(state);
      Integer agent = published.get(DockerSettings.AGENT_PORT);
      if (agent == null) {
        throw failure(Kind.PORT_TAKEN, "the engine published no port for the agent", null);
      }
      attributes.put("port", Integer.toString(agent));
      StringBuilder workers = new StringBuilder();
      for (int port : settings.workerPorts()) {
        Integer hostPort = published.get(port);
        if (hostPort != null) {
          workers.append(workers.isEmpty() ? "" : ",").append(port).append('=').append(hostPort);
        }
      }
      attributes.put("workers", workers.toString());
    }
    return new RuntimeHandle(sandboxId, NAME, attributes);
  }

  /** The limits the container runs without, from its label. */
  private static Optional<String> unenforced(Map<String, Object> state) {
    Object value = map(map(state.get("Config")).get("Labels")).get(LABEL_UNENFORCED);
    return value == null ? Optional.empty() : Optional.of(value.toString());
  }

  private static boolean hostNetwork(Map<String, Object> state) {
    return "host".equals(map(state.get("HostConfig")).get("NetworkMode"));
  }

  /** Container port to host port, from {@code NetworkSettings.Ports}. */
  static Map<Integer, Integer> publishedPorts(Map<String, Object> state) {
    Map<Integer, Integer> ports = new LinkedHashMap<>();
    Map<String, Object> published = map(map(state.get("NetworkSettings")).get("Ports"));
    published.forEach(
        (key, value) -> {
          if (value instanceof List<?> bindings && !bindings.isEmpty()) {
            Object hostPort = map(bindings.get(0)).get("HostPort");
            if (hostPort != null && !hostPort.toString().isEmpty()) {
              ports.put(
                  Integer.parseInt(key.substring(0, key.indexOf('/'))),
                  Integer.parseInt(hostPort.toString()));
            }
          }
        });
    return ports;
  }

  /** One-shot from the engine's stats endpoint (see {@link DockerStats}). */
  @Override
  public Optional<RuntimeStats> stats(RuntimeHandle handle) {
    return DockerStats.read(engine, container(handle));
  }

  @Override
  public RuntimeState inspect(RuntimeHandle handle) {
    String container = container(handle);
    Optional<Map<String, Object>> found;
    try {
      found = inspectJson(container);
    } catch (EngineException e) {
      // The engine is down: we cannot say the sandbox is gone, only that it is not usable now.
      return new RuntimeState(
          SandboxStatus.ERROR,
          List.of(),
          Optional.of(new RuntimeFailure(Kind.ENGINE_UNREACHABLE, e.getMessage())));
    }
    if (found.isEmpty()) {
      return RuntimeState.missing();
    }
    Map<String, Object> s = map(found.get().get("State"));
    String status = String.valueOf(s.get("Status"));
    return switch (status) {
      case "running" -> running(handle);
      case "paused" -> state(SandboxStatus.PAUSED);
      case "created", "restarting" -> state(SandboxStatus.STARTING);
      case "removing" -> RuntimeState.missing();
      default -> {
        int code = ((Number) s.getOrDefault("ExitCode", -1)).intValue();
        boolean oom = Boolean.TRUE.equals(s.get("OOMKilled"));
        yield new RuntimeState(
            SandboxStatus.ERROR,
            List.of(),
            Optional.of(
                new RuntimeFailure(
                    oom ? Kind.OUT_OF_MEMORY : Kind.EXITED,
                    "container "
                        + container
                        + " is "
                        + status
                        + " (exit code "
                        + code
                        + (oom ? ", OOM-killed" : "")
                        + ")")));
      }
    };
  }

  private RuntimeState running(RuntimeHandle handle) {
    int port = Integer.parseInt(handle.attributes().getOrDefault("port", "0"));
    if (!probe.answers(probeHost(), port)) {
      return state(SandboxStatus.STARTING);
    }
    return new RuntimeState(SandboxStatus.RUNNING, urls(handle), Optional.empty());
  }

  /** Where this control plane reaches published ports: loopback unless bound elsewhere. */
  private String probeHost() {
    String bind = settings.bindAddress();
    return settings.hostNetwork() || bind.equals("0.0.0.0") || bind.isBlank() ? "127.0.0.1" : bind;
  }

  private List<ExposedUrl> urls(RuntimeHandle handle) {
    int port = Integer.parseInt(handle.attributes().getOrDefault("port", "0"));
    boolean host = "host".equals(handle.attributes().get("network"));
    List<ExposedUrl> urls = new ArrayList<>();
    urls.add(
        new ExposedUrl(
            ExposedUrl.AGENT_SERVER, settings.url(port), host ? port : DockerSettings.AGENT_PORT));
    String workers = handle.attributes().getOrDefault("workers", "");
    int n = 1;
    for (String pair : workers.split(",")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        int inside = Integer.parseInt(pair.substring(0, eq));
        int outside = Integer.parseInt(pair.substring(eq + 1));
        urls.add(new ExposedUrl("WORKER_" + n++, settings.url(outside), inside));
      }
    }
    return urls;
  }

  private static RuntimeState state(SandboxStatus status) {
    return new RuntimeState(status, List.of(), Optional.empty());
  }

  // ---------------------------------------------------------------- pause, resume

  @Override
  public void pause(RuntimeHandle handle) {
    String container = container(handle);
    retrying(
        container,
        "pause",
        () -> engine.post("/containers/" + container + "/pause", null),
        "paused",
        handle.sandboxId());
  }

  @Override
  public RuntimeHandle resume(RuntimeHandle handle) {
    String container = container(handle);
    long deadline = System.nanoTime() + settings.readyTimeout().toNanos();
    try {
      Map<String, Object> state =
          inspectJson(container)
              .orElseThrow(
                  () ->
                      failure(
                          Kind.EXITED,
                          "container " + container + " of " + handle.sandboxId() + " is gone",
                          null));
      String status = String.valueOf(map(state.get("State")).get("Status"));
      RuntimeHandle resumed = handle;
      switch (status) {
        case "paused" ->
            retrying(
                container,
                "unpause",
                () -> engine.post("/containers/" + container + "/unpause", null),
                "running",
                handle.sandboxId());
        case "running" -> {}
        case "exited", "created", "dead" -> resumed = restart(handle, container, state);
        default -> throw failure(Kind.UNKNOWN, "container " + container + " is " + status, null);
      }
      int port = Integer.parseInt(resumed.attributes().getOrDefault("port", "0"));
      while (!probe.answers(probeHost(), port)) {
        if (System.nanoTime() - deadline >= 0) {
          throw failure(
              Kind.NEVER_READY,
              "agent of " + container + " did not answer within " + settings.readyTimeout(),
              null);
        }
        sleep(Duration.ofMillis(10));
      }
      return resumed;
    } catch (EngineException e) {
      throw failure(Kind.ENGINE_UNREACHABLE, e.getMessage(), e);
    }
  }

  /**
   * Starts a stopped container again with the same workspace. Its agent gets only the admin key
   * digest (from the label): the control plane hands it the new session key next.
   */
  private RuntimeHandle restart(RuntimeHandle handle, String container, Map<String, Object> state) {
    String admin =
        String.valueOf(map(map(state.get("Config")).get("Labels")).getOrDefault(LABEL_ADMIN, ""));
    String secrets = AgentSecrets.lines(List.of(), admin);
    if (secrets.isEmpty()) {
      throw failure(Kind.UNKNOWN, "container " + container + " has no admin key label", null);
    }
    return launch(handle.sandboxId(), container, secrets);
  }

  /**
   * One pause/unpause, retried: dockerd 20.10 answers 409 or 500 to these under load. Done when the
   * container reaches {@code target}.
   */
  private void retrying(
      String container,
      String what,
      java.util.function.Supplier<Response> call,
      String target,
      String sandboxId) {
    Duration backoff = Duration.ofMillis(20);
    Response last = null;
    for (int attempt = 0; attempt < RETRIES; attempt++) {
      try {
        last = call.get();
      } catch (EngineException e) {
        throw new SandboxException(
            "The container engine cannot be reached right now.", Optional.of(sandboxId), e);
      }
      if (last.ok()) {
        return;
      }
      Optional<Map<String, Object>> state = inspectJson(container);
      if (state.isEmpty()) {
        throw new SandboxException(
            "Sandbox " + sandboxId + " is not running, so it cannot be " + target + ".",
            Optional.of(sandboxId));
      }
      String status = String.valueOf(map(state.get().get("State")).get("Status"));
      if (status.equals(target)) {
        return;
      }
      if (!status.equals("running") && !status.equals("paused")) {
        throw new SandboxException(
            "Sandbox " + sandboxId + " is not running, so it cannot be " + target + ".",
            Optional.of(sandboxId));
      }
      LOG.log(
          System.Logger.Level.DEBUG,
          "{0} of {1} answered {2} ({3}); retrying",
          what,
          container,
          last.status(),
          last.message());
      sleep(backoff);
      backoff =
          backoff.multipliedBy(2).compareTo(Duration.ofMillis(500)) > 0
              ? Duration.ofMillis(500)
              : backoff.multipliedBy(2);
    }
    throw new SandboxException(
        "The container engine would not " + what + " sandbox " + sandboxId + "; try again.",
        Optional.of(sandboxId));
  }

  // ---------------------------------------------------------------- destroy, list

  @Override
  public void destroy(RuntimeHandle handle) {
    destroyContainer(container(handle));
  }

  private void destroyContainer(String container) {
    Optional<Map<String, Object>> state = inspectJson(container);
    if (state.isEmpty()) {
      return;
    }
    String status = String.valueOf(map(state.get().get("State")).get("Status"));
    if (status.equals("paused")) {
      // A frozen container cannot take SIGTERM: thaw it so it stops gracefully.
      for (int i = 0;
          i < RETRIES && !engine.post("/containers/" + container + "/unpause", null).ok();
          i++) {
        if (!"paused".equals(statusOf(container))) {
          break;
        }
        sleep(Duration.ofMillis(50));
      }
    }
    if (status.equals("running") || status.equals("paused")) {
      engine.call(
          "POST",
          "/containers/" + container + "/stop?t=" + settings.stopGrace().toSeconds(),
          new byte[0],
          null,
          settings.stopGrace().plusSeconds(60));
    }
    for (int i = 0; i < RETRIES; i++) {
      Response removed = engine.delete("/containers/" + container + "?v=1&force=1");
      if (removed.ok() || removed.status() == 404) {
        return;
      }
      // 409: removal already in progress; wait for it to finish.
      sleep(Duration.ofMillis(250));
    }
    throw new IllegalStateException("container " + container + " could not be removed");
  }

  private String statusOf(String container) {
    return inspectJson(container)
        .map(s -> String.valueOf(map(s.get("State")).get("Status")))
        .orElse("missing");
  }

  @Override
  public List<RuntimeHandle> list() {
    // Only this control plane's containers: another Paddock on the same engine (a second data
    // directory) keeps its own, and neither reaps the other's as orphans.
    String filters =
        enc(
            "{\"label\":[\""
                + LABEL_MANAGED
                + "=true\",\""
                + LABEL_INSTANCE
                + "="
                + settings.instance()
                + "\"]}");
    Response response = engine.get("/containers/json?all=1&filters=" + filters);
    if (!response.ok()) {
      throw new IllegalStateException("container list: " + response.message());
    }
    List<RuntimeHandle> handles = new ArrayList<>();
    for (Map<String, Object> summary : response.jsonList()) {
      String container = String.valueOf(summary.get("Id"));
      Map<String, Object> labels = map(summary.get("Labels"));
      String sandboxId = String.valueOf(labels.get(LABEL_SANDBOX));
      if (sandboxId.equals("null") || starting.contains(sandboxId)) {
        continue;
      }
      Optional<Map<String, Object>> state = inspectJson(container);
      if (state.isEmpty()) {
        continue;
      }
      String status = String.valueOf(map(state.get().get("State")).get("Status"));
      if (status.equals("created") && createdBefore(state.get(), settings.readyTimeout())) {
        // A start cut short before the container ran: nothing ever ran in it.
        destroyContainer(container);
        continue;
      }
      handles.add(adopted(sandboxId, container, state.get()));
    }
    return handles;
  }

  /** The handle of a container found by its labels (after a control-plane restart). */
  private RuntimeHandle adopted(String sandboxId, String container, Map<String, Object> state) {
    int port = 0;
    if (hostNetwork(state)) {
      // The first ready line since the container last started: later output could be shaped by
      // what runs in the sandbox, the agent's own ready line is always the first.
      long since = startedAtEpochSeconds(state);
      Response logs =
          engine.get("/containers/" + container + "/logs?stdout=1&stderr=1&since=" + since);
      if (logs.ok()) {
        port = ContainerOutput.firstReadyPort(ContainerOutput.demultiplex(logs.body())).orElse(0);
      }
    }
    try {
      return handle(sandboxId, container, state, port);
    } catch (RuntimeStartException e) {
      Map<String, String> attributes = new LinkedHashMap<>();
      attributes.put("container", container);
      attributes.put("network", hostNetwork(state) ? "host" : "bridge");
      attributes.put("port", "0");
      unenforced(state).ifPresent(limits -> attributes.put(RuntimeHandle.UNENFORCED, limits));
      return new RuntimeHandle(sandboxId, NAME, attributes);
    }
  }

  private static long startedAtEpochSeconds(Map<String, Object> state) {
    try {
      return Instant.parse(String.valueOf(map(state.get("State")).get("StartedAt")))
          .getEpochSecond();
    } catch (RuntimeException e) {
      return 0;
    }
  }

  private static boolean createdBefore(Map<String, Object> state, Duration age) {
    try {
      Instant created = Instant.parse(String.valueOf(state.get("Created")));
      return created.plus(age).isBefore(Instant.now());
    } catch (RuntimeException e) {
      return false;
    }
  }

  @Override
  public void close() {
    watchdog.shutdownNow();
  }

  // ---------------------------------------------------------------- helpers

  Optional<Map<String, Object>> inspectJson(String container) {
    Response response = engine.get("/containers/" + container + "/json");
    if (response.status() == 404) {
      return Optional.empty();
    }
    if (!response.ok()) {
      throw new EngineException(
          "inspect of " + container + ": " + response.status() + " " + response.message(), null);
    }
    return Optional.of(response.json());
  }

  private static String container(RuntimeHandle handle) {
    String container = handle.attributes().get("container");
    if (container == null || container.isBlank()) {
      return containerName(handle.sandboxId());
    }
    return container;
  }

  private RuntimeStartException vanished(String container) {
    return failure(Kind.EXITED, "container " + container + " vanished while starting", null);
  }

  private void removeIfUnstarted(String name, String sandboxId, RuntimeException failure) {
    try {
      inspectJson(name)
          .filter(c -> sandboxId.equals(map(map(c.get("Config")).get("Labels")).get(LABEL_SANDBOX)))
          .filter(c -> "created".equals(String.valueOf(map(c.get("State")).get("Status"))))
          .ifPresent(c -> destroyContainer(name));
    } catch (RuntimeException cleanup) {
      failure.addSuppressed(cleanup);
    }
  }

  private void removeQuietly(String container, RuntimeException failure) {
    try {
      destroyContainer(container);
    } catch (RuntimeException cleanup) {
      failure.addSuppressed(cleanup);
    }
  }

  private static RuntimeStartException asStartFailure(RuntimeException e, String what) {
    if (e instanceof RuntimeStartException start) {
      return start;
    }
    if (e instanceof EngineException) {
      return failure(Kind.ENGINE_UNREACHABLE, what + ": " + e.getMessage(), e);
    }
    return failure(Kind.UNKNOWN, what + ": " + e, e);
  }

  static RuntimeStartException failure(Kind kind, String detail, Throwable cause) {
    return RuntimeStartException.of(kind, detail, cause);
  }

  private static String tailDetail(List<String> tail) {
    return tail.isEmpty() ? "; it printed nothing" : "; last output:\n" + String.join("\n", tail);
  }

  private static boolean isBindFailure(String line) {
    String lower = line.toLowerCase(Locale.ROOT);
    return lower.contains("address already in use") || lower.contains("bindexception");
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object value) {
    return value instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  /** Backoff between retries of an engine call (not synchronisation: the engine is polled). */
  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
