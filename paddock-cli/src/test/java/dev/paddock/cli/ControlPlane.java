package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.ArchiveStore;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.process.ProcessBackendProvider;
import dev.paddock.controlplane.ArchiveSettings;
import dev.paddock.controlplane.ArchiveStores;
import dev.paddock.controlplane.CgroupRoots;
import dev.paddock.controlplane.ChildProcesses;
import dev.paddock.controlplane.ConfiguredSpecService;
import dev.paddock.controlplane.ControlPlaneConfig;
import dev.paddock.controlplane.ControlPlaneSandboxService;
import dev.paddock.controlplane.FileTrees;
import dev.paddock.controlplane.ForwardedEnvironment;
import dev.paddock.server.ApiServer;
import dev.paddock.server.ApiServerConfig;
import dev.paddock.server.Metrics;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The whole control plane as {@code paddock server} wires it, in this JVM on a loopback port 0: the
 * real process backend (agent-servers as child processes, started from this JVM's class path), the
 * SQLite store in a temporary data dir, the REST API. After each test it stops everything and fails
 * the test if an agent process or the data dir is left behind. Public, in this module's test-jar,
 * for the suites of {@code paddock-hardening}.
 */
public final class ControlPlane implements BeforeEachCallback, AfterEachCallback {
  public static final String ADMIN_KEY = "pdk_test-admin-key-0123456789abcdef0123456789";
  public static final String MASTER_SECRET = "a-test-master-secret-of-at-least-32-bytes";

  private final UnaryOperator<ControlPlaneConfig.Builder> configure;
  private final Function<Path, ArchiveStore> archiveStores;
  private ApiServerConfig apiConfig = ApiServerConfig.DEFAULT;
  private Path dataDir;
  private ArchiveStore archiveStore;
  private SandboxStore store;
  private SandboxBackend backend;
  private ControlPlaneSandboxService service;
  private ApiServer server;
  private boolean withGateway;
  private boolean perSandboxMetrics;
  private Map<String, String> backendSettings = Map.of();
  private final dev.paddock.controlplane.TickingClock clock =
      new dev.paddock.controlplane.TickingClock();
  private dev.paddock.controlplane.KeptLogs logs;
  private dev.paddock.server.gateway.Gateway gateway;
  final HttpClient http = HttpClient.newHttpClient();

  public ControlPlane() {
    this(b -> b);
  }

  ControlPlane(UnaryOperator<ControlPlaneConfig.Builder> configure) {
    this(configure, data -> ArchiveStores.directory(data.resolve("archives")));
  }

  private ControlPlane(
      UnaryOperator<ControlPlaneConfig.Builder> configure,
      Function<Path, ArchiveStore> archiveStores) {
    this.configure = configure;
    this.archiveStores = archiveStores;
  }

  /** Archives on with {@code settings}, kept in {@code archives/} of the data dir. */
  public static ControlPlane archiving(ArchiveSettings settings) {
    return new ControlPlane(b -> b.archives(settings));
  }

  /**
   * Archives on with {@code settings}, kept in the store {@code stores} makes (called once per
   * test, before the control plane starts; the store is closed after the test).
   */
  public static ControlPlane archiving(ArchiveSettings settings, Supplier<ArchiveStore> stores) {
    return new ControlPlane(b -> b.archives(settings), data -> stores.get());
  }

  /** This control plane with the REST API's limits and keys from {@code config}. */
  ControlPlane withApi(ApiServerConfig config) {
    this.apiConfig = config;
    return this;
  }

  /** This control plane with {@code settings} added to the process backend's own. */
  public ControlPlane withBackendSettings(Map<String, String> settings) {
    this.backendSettings = Map.copyOf(settings);
    return this;
  }

  /** This control plane with per-sandbox series in {@code /metrics}. */
  ControlPlane withSandboxSeries() {
    this.perSandboxMetrics = true;
    return this;
  }

  /** This control plane with the sandbox gateway on, as {@code paddock server} runs it. */
  ControlPlane withGateway() {
    this.withGateway = true;
    return this;
  }

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    dataDir = Files.createTempDirectory("paddock-cp-test-");
    store = SandboxStores.openEmbedded(dataDir);
    archiveStore = archiveStores.apply(dataDir);
    Map<String, String> settings = new java.util.HashMap<>(backendSettings);
    settings.put("paddock.data-dir", dataDir.toString());
    settings.put("agent.command", ProcessBackendProvider.classPathAgentCommand());
    settings.put("process.stop-grace", "3s");
    ProcessBackendProvider provider = new ProcessBackendProvider();
    backend = provider.create(settings);
    var specs =
        ConfiguredSpecService.of(
            provider.specs(settings).search(dev.paddock.api.PageRequest.first(100)).items(),
            ForwardedEnvironment.none());
    logs =
        dev.paddock.controlplane.KeptLogs.create(
            dataDir.resolve("logs"),
            store,
            backend,
            new dev.paddock.controlplane.KeptLogs.Limits(Duration.ofDays(7), LOG_MAX_BYTES),
            clock);
    service =
        ControlPlaneSandboxService.create(
            store,
            backend,
            specs,
            configure
                .apply(
                    ControlPlaneConfig.builder(MASTER_SECRET)
                        .archiveStore(archiveStore)
                        .events(logs.events()))
                .build());
    var observability =
        new dev.paddock.server.Observability(service.usage(), logs, perSandboxMetrics, 500);
    ApiServer.bootstrapAdmin(store, Optional.of(ADMIN_KEY));
    if (withGateway) {
      gateway =
          dev.paddock.server.gateway.Gateway.create(
              store,
              backend,
              service::agentSessionKey,
              GatewaySettings.resumer(service),
              dev.paddock.server.gateway.GatewayConfig.builder(MASTER_SECRET).build());
      server =
          ApiServer.start(
              dev.paddock.http.HttpServerConfig.builder(
                      new java.net.InetSocketAddress("127.0.0.1", 0))
                  .build(),
              service,
              specs,
              store,
              new Metrics(),
              service.archives(),
              apiConfig,
              observability,
              gateway);
    } else {
      server =
          ApiServer.start(
              dev.paddock.http.HttpServerConfig.builder(
                      new java.net.InetSocketAddress("127.0.0.1", 0))
                  .backlog(512)
                  .build(),
              service,
              specs,
              store,
              new Metrics(),
              service.archives(),
              apiConfig,
              observability);
    }
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    List<String> ids = new ArrayList<>();
    try {
      for (var sandbox :
          service
              .search(
                  dev.paddock.api.Caller.admin("cleanup"), dev.paddock.api.PageRequest.first(100))
              .items()) {
        ids.add(sandbox.id());
        try {
          service.delete(dev.paddock.api.Caller.admin("cleanup"), sandbox.id());
        } catch (dev.paddock.api.SandboxException e) {
          // A required archive that cannot be taken blocks the delete: tear the runtime down
          // directly (its agent may be dead, so reconciling would not list it) and drop the record.
          store.find(sandbox.id()).flatMap(r -> r.runtime()).ifPresent(backend::destroy);
          store.delete(sandbox.id());
        }
      }
    } finally {
      server.close();
      if (gateway != null) {
        gateway.close();
      }
      service.close();
      archiveStore.close();
      backend.close();
      store.close();
      http.close();
    }
    ChildProcesses.awaitNoneLeft("no agent process left behind", Duration.ofSeconds(15));
    FileTrees.delete(dataDir);
    assertThat(dataDir).doesNotExist();
    for (String id : ids) {
      for (Path root : CgroupRoots.all()) {
        assertThat(root.resolve(id)).as("cgroup of %s left behind", id).doesNotExist();
      }
    }
  }

  public Path dataDir() {
    return dataDir;
  }

  /** The cap of each sandbox's kept log in these tests. */
  static final long LOG_MAX_BYTES = 256 << 10;

  /** The clock of the kept logs and of {@link #reaper}: advance it to age what was left. */
  dev.paddock.controlplane.TickingClock clock() {
    return clock;
  }

  /** The kept logs, as {@code paddock server}'s reconcile loop prunes them. */
  dev.paddock.controlplane.KeptLogs logs() {
    return logs;
  }

  /** A reaper over this control plane, on {@link #clock}. */
  dev.paddock.controlplane.SandboxReaper reaper(dev.paddock.controlplane.SandboxReaper.Ages ages) {
    return dev.paddock.controlplane.SandboxReaper.create(service, store, ages, clock);
  }

  /** One reconcile pass, as {@code paddock server}'s loop runs it. */
  void reconcile() {
    service.reconcile();
  }

  /**
   * Kills the agent of sandbox {@code sandboxId} with SIGKILL, as a crash or the OOM killer would,
   * and returns once it is gone. Its agent is the child of this JVM whose command line names the
   * sandbox (read from {@code /proc}: {@code ProcessHandle.Info} gives no command line when it is
   * very long, a class path of many jars).
   */
  public void killAgent(String sandboxId) throws Exception {
    List<ProcessHandle> agents =
        ProcessHandle.current()
            .descendants()
            .filter(p -> commandLine(p).contains(sandboxId))
            .toList();
    assertThat(agents).as("the agent process of %s", sandboxId).isNotEmpty();
    for (ProcessHandle agent : agents) {
      agent.destroyForcibly();
      agent.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
    }
  }

  private static String commandLine(ProcessHandle process) {
    try {
      return new String(
          Files.readAllBytes(Path.of("/proc/" + process.pid() + "/cmdline")),
          java.nio.charset.StandardCharsets.UTF_8);
    } catch (IOException e) {
      return ""; // it exited meanwhile
    }
  }

  /** The backend, for what a test does to a runtime behind the control plane's back. */
  SandboxBackend backend() {
    return backend;
  }

  /** The store, for asserting what the API did (or did not) write. */
  SandboxStore store() {
    return store;
  }

  /** {@code method path} with a sandbox's {@code X-Session-API-Key}, as its agent would post. */
  HttpResponse<String> asSandbox(String method, String path, String sessionKey, String body)
      throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url() + path))
            .timeout(Duration.ofSeconds(60))
            .header("X-Session-API-Key", sessionKey)
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body))
            .build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  public String url() {
    return "http://127.0.0.1:" + server.port();
  }

  HttpResponse<String> send(String method, String path, Optional<String> apiKey, String body)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(url() + path))
            .timeout(Duration.ofSeconds(60))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    apiKey.ifPresent(k -> request.header("Authorization", "Bearer " + k));
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> admin(String method, String path, String body)
      throws IOException, InterruptedException {
    return send(method, path, Optional.of(ADMIN_KEY), body);
  }
}
