package dev.paddock.cli;

import dev.paddock.api.ArchiveStore;
import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.settings.CommonSettings;
import dev.paddock.api.settings.Settings;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.api.spi.SandboxBackendProvider;
import dev.paddock.cli.logging.PaddockLogging;
import dev.paddock.controlplane.ArchiveSettings;
import dev.paddock.controlplane.ArchiveStores;
import dev.paddock.controlplane.ConfiguredSpecService;
import dev.paddock.controlplane.ControlPlaneConfig;
import dev.paddock.controlplane.ControlPlaneSandboxService;
import dev.paddock.controlplane.ControlPlaneSettings;
import dev.paddock.controlplane.ForwardedEnvironment;
import dev.paddock.controlplane.KeptLogs;
import dev.paddock.controlplane.ObservabilitySettings;
import dev.paddock.controlplane.QueueSettings;
import dev.paddock.controlplane.SandboxEvents;
import dev.paddock.controlplane.SandboxLimits;
import dev.paddock.controlplane.SandboxReaper;
import dev.paddock.http.HttpServerConfig;
import dev.paddock.http.TlsCertificate;
import dev.paddock.server.ApiServer;
import dev.paddock.server.ApiServerConfig;
import dev.paddock.server.Metrics;
import dev.paddock.server.Observability;
import dev.paddock.server.gateway.Gateway;
import dev.paddock.store.DataDirectory;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code paddock server}: the control plane on embedded defaults (process backend, SQLite under the
 * data dir) or what the settings say. Settings come from {@code <data dir>/paddock.properties},
 * then the environment, then flags (each overriding the one before); every declared setting has a
 * flag, listed by {@code --help}.
 */
@Command(
    mixinStandardHelpOptions = true,
    name = "server",
    description = "Run the control plane (REST API on PADDOCK_HOST:PADDOCK_PORT).")
final class ServerCommand implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger("paddock.server");

  @Spec CommandSpec spec;

  private final Map<String, String> environment;
  private final SettingsCatalog catalog;
  private SettingFlags flags;

  ServerCommand(Map<String, String> environment, SettingsCatalog catalog) {
    this.environment = Map.copyOf(environment);
    this.catalog = catalog;
  }

  /** Called once the command line exists: adds the settings' flags and help. */
  void install(CommandLine line) {
    flags = SettingFlags.install(line, catalog);
  }

  @Override
  public Integer call() throws Exception {
    Map<String, String> given = flags.values(spec);
    Path data = SettingsCatalog.dataDir(environment, given);
    DataDirectory.create(data);
    Settings typed = catalog.load(data, environment, given);
    Map<String, String> settings = handedOn(typed, data);
    PaddockLogging.configure(settings);
    typed.warnings().forEach(LOG::warn);
    Optional<TlsCertificate> tls =
        TlsSettings.certificate(typed); // a bad pair stops start-up first
    String runtimeName = typed.get(ServerSettings.RUNTIME);
    SandboxBackendProvider provider = provider(runtimeName);
    Metrics metrics = new Metrics();
    SandboxStore store = openStore(typed, data);
    SandboxBackend backend = provider.create(settings);
    SandboxSpecService specs =
        ConfiguredSpecService.of(
            allSpecs(provider.specs(settings)), ForwardedEnvironment.fromSettings(settings));
    ArchiveStore archiveStore = ArchiveStores.fromSettings(settings);
    KeptLogs logs =
        KeptLogs.create(
            data.resolve("logs"),
            store,
            backend,
            ObservabilitySettings.logLimits(typed),
            java.time.Clock.systemUTC());
    ControlPlaneSandboxService service =
        ControlPlaneSandboxService.create(
            store, backend, specs, config(typed, data, metrics, archiveStore, logs.events()));
    Observability observability =
        new Observability(
            service.usage(),
            logs,
            typed.get(ObservabilitySettings.METRICS_PER_SANDBOX),
            typed.get(ObservabilitySettings.METRICS_MAX_SANDBOXES));
    SandboxReaper reaper =
        SandboxReaper.create(
            service, store, ObservabilitySettings.reapAges(typed), java.time.Clock.systemUTC());
    Optional<String> bootstrapKey =
        ApiServer.bootstrapAdmin(store, typed.find(ServerSettings.ADMIN_KEY));
    String bindHost = typed.get(ServerSettings.HOST);
    int bindPort = typed.get(ServerSettings.PORT);
    Optional<Gateway> gateway =
        GatewaySettings.gateway(
            typed,
            masterSecret(typed, data),
            store,
            backend,
            service::agentSessionKey,
            GatewaySettings.resumer(service));
    ApiServer server =
        startApi(
            httpConfig(bindHost, bindPort, tls),
            service,
            specs,
            store,
            metrics,
            settings,
            observability,
            gateway);
    String url = ServerRecord.localUrl(bindHost, server.port(), tls.isPresent());
    ScheduledExecutorService reconciler =
        reconcileLoop(service, reaper, logs, typed.get(ServerSettings.RECONCILE));
    ServerRecord.write(data, url);
    if (bootstrapKey.isPresent()) {
      Path keyFile = writeSecret(data.resolve("admin.key"), bootstrapKey.get());
      System.out.println("admin API key (shown once; saved for the CLI in " + keyFile + "):");
      System.out.println("  " + bootstrapKey.get());
    }
    System.out.println(
        "paddock control plane listening on "
            + url
            + " (runtime "
            + runtimeName
            + ", data "
            + data
            + ")");
    System.out.flush();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  reconciler.shutdownNow();
                  server.close();
                  tls.ifPresent(TlsCertificate::close);
                  ServerRecord.remove(data);
                  gateway.ifPresent(Gateway::close);
                  service.close();
                  archiveStore.close();
                  backend.close();
                  store.close();
                  stopped.countDown();
                }));
    stopped.await();
    return 0;
  }

  /** Where to listen; HTTPS with the watched certificate when one is configured. */
  private static HttpServerConfig httpConfig(String host, int port, Optional<TlsCertificate> tls) {
    HttpServerConfig.Builder http =
        HttpServerConfig.builder(new InetSocketAddress(host, port))
            .backlog(512)
            .platformThreads(ApiServer.PLATFORM_CONNECTIONS);
    tls.ifPresent(http::tls);
    return http.build();
  }

  private static ApiServer startApi(
      HttpServerConfig http,
      ControlPlaneSandboxService service,
      SandboxSpecService specs,
      SandboxStore store,
      Metrics metrics,
      Map<String, String> settings,
      Observability observability,
      Optional<Gateway> gateway) {
    ApiServerConfig api = ApiServerConfig.fromSettings(settings);
    if (gateway.isEmpty()) {
      return ApiServer.start(
          http, service, specs, store, metrics, service.archives(), api, observability);
    }
    return ApiServer.start(
        http,
        service,
        specs,
        store,
        metrics,
        service.archives(),
        api,
        observability,
        gateway.get());
  }

  /**
   * What backends and stores are handed: every value flattened, the data directory as chosen, and
   * {@code paddock.home} from the launcher when nothing set it.
   */
  static Map<String, String> handedOn(Settings typed, Path data) {
    Map<String, String> settings = new LinkedHashMap<>(typed.values());
    settings.put(CommonSettings.DATA_DIR.name(), data.toString());
    settings.putIfAbsent(
        CommonSettings.HOME.name(),
        System.getProperty("paddock.home", Path.of("").toAbsolutePath().toString()));
    return settings;
  }

  /**
   * Every {@code PADDOCK_RECONCILE_SECONDS} (default 10), on the replica holding the background
   * lease only: reconciles (adopts runtimes that became ready after a crash cut their start short,
   * fails starts abandoned past the start timeout, notices vanished runtimes, reaps orphans, takes
   * over what dead replicas left unfinished), then enforces lifetimes. Then, on every replica,
   * reaps sandboxes left ended and prunes this replica's kept logs past their retention.
   */
  private static ScheduledExecutorService reconcileLoop(
      ControlPlaneSandboxService service, SandboxReaper reaper, KeptLogs logs, Duration every) {
    ScheduledExecutorService loop =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread t = new Thread(task, "paddock-reconcile");
              t.setDaemon(true);
              return t;
            });
    loop.scheduleWithFixedDelay(
        () -> {
          try {
            service.runBackgroundWork();
          } catch (RuntimeException e) {
            LOG.warn("background pass failed (next pass retries)", e);
          }
          try {
            reaper.reap();
            logs.prune();
          } catch (RuntimeException e) {
            LOG.warn("reaping or log pruning failed (next pass retries)", e);
          }
        },
        every.toMillis(),
        every.toMillis(),
        TimeUnit.MILLISECONDS);
    return loop;
  }

  private static SandboxBackendProvider provider(String name) {
    List<String> known = new ArrayList<>();
    for (SandboxBackendProvider provider : ServiceLoader.load(SandboxBackendProvider.class)) {
      if (provider.names().contains(name)) {
        return provider;
      }
      known.addAll(provider.names());
    }
    throw new IllegalArgumentException(
        ServerSettings.RUNTIME.name() + "='" + name + "' is invalid: expected one of " + known);
  }

  private static SandboxStore openStore(Settings settings, Path data) {
    Optional<String> url = settings.find(ServerSettings.DATABASE_URL);
    if (url.isEmpty()) {
      return SandboxStores.openEmbedded(data);
    }
    return SandboxStores.open(
        url.get(),
        settings.get(ServerSettings.DATABASE_USER),
        settings.find(ServerSettings.DATABASE_PASSWORD).orElse(""));
  }

  private static List<SandboxSpec> allSpecs(SandboxSpecService specs) {
    List<SandboxSpec> all = new ArrayList<>();
    Optional<String> pageId = Optional.empty();
    do {
      Page<SandboxSpec> page = specs.search(new PageRequest(pageId, PageRequest.MAX_LIMIT));
      all.addAll(page.items());
      pageId = page.nextPageId();
    } while (pageId.isPresent());
    return all;
  }

  private static ControlPlaneConfig config(
      Settings settings, Path data, Metrics metrics, ArchiveStore archiveStore, SandboxEvents kept)
      throws IOException {
    ControlPlaneConfig.Builder config =
        ControlPlaneConfig.builder(masterSecret(settings, data))
            .events(SandboxEvents.fanOut(metricsEvents(metrics), kept));
    settings.find(ControlPlaneSettings.MAX_SANDBOXES).ifPresent(config::maxSandboxes);
    settings
        .find(ControlPlaneSettings.MAX_SANDBOXES_PER_USER)
        .ifPresent(config::maxSandboxesPerUser);
    config.startTimeout(settings.get(ControlPlaneSettings.START_TIMEOUT));
    config.replicaId(
        settings.find(ControlPlaneSettings.REPLICA_ID).orElse(persistedReplicaId(data)));
    config.replicaLease(settings.get(ControlPlaneSettings.REPLICA_LEASE));
    config.pauseOldest(settings.get(ControlPlaneSettings.PAUSE_OLDEST));
    config.archives(ArchiveSettings.fromSettings(settings));
    config.limits(SandboxLimits.fromSettings(settings));
    config.queue(QueueSettings.fromSettings(settings));
    config.archiveStore(archiveStore);
    return config.build();
  }

  /** Start and start-queue outcomes into {@code metrics}. */
  private static SandboxEvents metricsEvents(Metrics metrics) {
    return new SandboxEvents() {
      @Override
      public void started(String sandboxId, Duration took) {
        metrics.startSucceeded(took.toNanos() / 1e9);
      }

      @Override
      public void startFailed(String sandboxId, RuntimeFailure.Kind kind) {
        metrics.startFailed(kind.id());
      }

      @Override
      public void queueAdmitted(String sandboxId, Duration waited) {
        metrics.queueAdmitted(waited.toNanos() / 1e9);
      }

      @Override
      public void queueTimedOut(String sandboxId, Duration waited) {
        metrics.queueTimedOut();
      }
    };
  }

  /**
   * The secret every sandbox's agent admin key is derived from: {@code PADDOCK_MASTER_SECRET} (set
   * the same on every replica), else a file in the data dir created on first start (0600).
   */
  private static String masterSecret(Settings settings, Path data) throws IOException {
    Optional<String> given = settings.find(ServerSettings.MASTER_SECRET);
    if (given.isPresent()) {
      return given.get();
    }
    Path file = data.resolve("master.secret");
    if (Files.exists(file)) {
      return Files.readString(file).trim();
    }
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    return Files.readString(
            writeSecret(file, Base64.getUrlEncoder().withoutPadding().encodeToString(bytes)))
        .trim();
  }

  /**
   * This data dir's replica id, made on first start ({@code cp-} and 16 random hex digits): a
   * restarted control plane recognises the operations and background lease it held before a crash
   * as its own and settles them at once, rather than waiting for its old heartbeat to lapse.
   */
  private static String persistedReplicaId(Path data) {
    Path file = data.resolve("replica.id");
    try {
      if (Files.exists(file)) {
        String id = Files.readString(file).trim();
        if (!id.isEmpty()) {
          return id;
        }
      }
      byte[] bytes = new byte[8];
      new SecureRandom().nextBytes(bytes);
      String id = "cp-" + java.util.HexFormat.of().formatHex(bytes);
      Files.writeString(file, id + "\n");
      return id;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot read or write " + file, e);
    }
  }

  /** Writes a secret readable by this user only. */
  private static Path writeSecret(Path file, String secret) throws IOException {
    Files.deleteIfExists(file);
    Files.createFile(
        file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(file, secret + "\n");
    return file;
  }
}
