package dev.paddock.cli;

import dev.paddock.api.ArchiveStore;
import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.api.spi.SandboxBackendProvider;
import dev.paddock.cli.logging.PaddockLogging;
import dev.paddock.controlplane.ArchiveSettings;
import dev.paddock.controlplane.ArchiveStores;
import dev.paddock.controlplane.ConfiguredSpecService;
import dev.paddock.controlplane.ControlPlaneConfig;
import dev.paddock.controlplane.ControlPlaneSandboxService;
import dev.paddock.controlplane.ForwardedEnvironment;
import dev.paddock.controlplane.SandboxEvents;
import dev.paddock.server.ApiServer;
import dev.paddock.server.ApiServerConfig;
import dev.paddock.server.Metrics;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import java.io.IOException;
import java.io.Reader;
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
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code paddock server}: the control plane on embedded defaults (process backend, SQLite under the
 * data dir) or what the settings say. Settings come from {@code <data dir>/paddock.properties},
 * then the environment, then these options (each overriding the one before).
 */
@Command(
    mixinStandardHelpOptions = true,
    name = "server",
    description = "Run the control plane (REST API on --host:--port).")
final class ServerCommand implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger("paddock.server");

  @Option(names = "--port", description = "port (env PADDOCK_PORT, default 3000)")
  Integer port;

  @Option(names = "--host", description = "address to bind (env PADDOCK_HOST, default 127.0.0.1)")
  String host;

  @Option(
      names = "--data-dir",
      description = "data directory (env PADDOCK_DATA_DIR, default ~/.paddock)")
  Path dataDir;

  @Option(
      names = "--runtime",
      description = "backend: process|local (env RUNTIME, default process)")
  String runtime;

  @Override
  public Integer call() throws Exception {
    Path data = dataDir != null ? dataDir : new Connection().dataDir();
    Files.createDirectories(data);
    Map<String, String> settings = settings(data);
    PaddockLogging.configure(settings);
    String runtimeName = settings.getOrDefault("RUNTIME", "process");
    SandboxBackendProvider provider = provider(runtimeName);
    Metrics metrics = new Metrics();
    SandboxStore store = openStore(settings, data);
    SandboxBackend backend = provider.create(settings);
    SandboxSpecService specs =
        ConfiguredSpecService.of(
            allSpecs(provider.specs(settings)), ForwardedEnvironment.fromSettings(settings));
    ArchiveStore archiveStore = ArchiveStores.fromSettings(settings);
    ControlPlaneSandboxService service =
        ControlPlaneSandboxService.create(
            store, backend, specs, config(settings, data, metrics, archiveStore));
    Optional<String> bootstrapKey =
        ApiServer.bootstrapAdmin(store, Optional.ofNullable(settings.get("PADDOCK_ADMIN_KEY")));
    String bindHost = host != null ? host : settings.getOrDefault("PADDOCK_HOST", "127.0.0.1");
    int bindPort =
        port != null ? port : Integer.parseInt(settings.getOrDefault("PADDOCK_PORT", "3000"));
    ApiServer server =
        ApiServer.start(
            bindHost,
            bindPort,
            service,
            specs,
            store,
            metrics,
            service.archives(),
            ApiServerConfig.fromSettings(settings));
    ScheduledExecutorService reconciler = reconcileLoop(service, settings);
    if (bootstrapKey.isPresent()) {
      Path keyFile = writeSecret(data.resolve("admin.key"), bootstrapKey.get());
      System.out.println("admin API key (shown once; saved for the CLI in " + keyFile + "):");
      System.out.println("  " + bootstrapKey.get());
    }
    System.out.println(
        "paddock control plane listening on http://"
            + bindHost
            + ":"
            + server.port()
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
                  service.close();
                  archiveStore.close();
                  backend.close();
                  store.close();
                  stopped.countDown();
                }));
    stopped.await();
    return 0;
  }

  /**
   * Reconciles every {@code PADDOCK_RECONCILE_SECONDS} (default 10): adopts runtimes that became
   * ready after a crash cut their start short, fails starts abandoned past the start timeout,
   * notices vanished runtimes, reaps orphans.
   */
  private static ScheduledExecutorService reconcileLoop(
      ControlPlaneSandboxService service, Map<String, String> settings) {
    int seconds = intSetting(settings, "PADDOCK_RECONCILE_SECONDS").orElse(10);
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
            service.reconcile();
          } catch (RuntimeException e) {
            LOG.warn("reconcile failed (next pass retries)", e);
          }
        },
        seconds,
        seconds,
        TimeUnit.SECONDS);
    return loop;
  }

  private Map<String, String> settings(Path data) throws IOException {
    Map<String, String> settings = new LinkedHashMap<>();
    Path file = data.resolve("paddock.properties");
    if (Files.isReadable(file)) {
      Properties properties = new Properties();
      try (Reader reader = Files.newBufferedReader(file)) {
        properties.load(reader);
      }
      properties.forEach((k, v) -> settings.put(k.toString(), v.toString()));
    }
    settings.putAll(System.getenv());
    if (runtime != null) {
      settings.put("RUNTIME", runtime);
    }
    settings.put("paddock.data-dir", data.toString());
    settings.putIfAbsent(
        "paddock.home",
        System.getProperty("paddock.home", Path.of("").toAbsolutePath().toString()));
    return settings;
  }

  private static SandboxBackendProvider provider(String name) {
    List<String> known = new ArrayList<>();
    for (SandboxBackendProvider provider : ServiceLoader.load(SandboxBackendProvider.class)) {
      if (provider.names().contains(name)) {
        return provider;
      }
      known.addAll(provider.names());
    }
    throw new IllegalArgumentException("unknown RUNTIME '" + name + "'; this build has " + known);
  }

  private static SandboxStore openStore(Map<String, String> settings, Path data) {
    String url = settings.get("PADDOCK_DATABASE_URL");
    if (url == null || url.isBlank()) {
      return SandboxStores.openEmbedded(data);
    }
    return SandboxStores.open(
        url,
        settings.getOrDefault("PADDOCK_DATABASE_USER", ""),
        settings.getOrDefault("PADDOCK_DATABASE_PASSWORD", ""));
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
      Map<String, String> settings, Path data, Metrics metrics, ArchiveStore archiveStore)
      throws IOException {
    ControlPlaneConfig.Builder config =
        ControlPlaneConfig.builder(masterSecret(settings, data))
            .events(
                new SandboxEvents() {
                  @Override
                  public void started(String sandboxId, Duration took) {
                    metrics.startSucceeded(took.toNanos() / 1e9);
                  }

                  @Override
                  public void startFailed(String sandboxId, RuntimeFailure.Kind kind) {
                    metrics.startFailed(kind.name());
                  }
                });
    intSetting(settings, "PADDOCK_MAX_SANDBOXES").ifPresent(config::maxSandboxes);
    intSetting(settings, "PADDOCK_START_TIMEOUT_SECONDS")
        .ifPresent(s -> config.startTimeout(Duration.ofSeconds(s)));
    intSetting(settings, "PADDOCK_MAX_SANDBOXES_PER_USER").ifPresent(config::maxSandboxesPerUser);
    config.pauseOldest(
        Boolean.parseBoolean(settings.getOrDefault("PADDOCK_PAUSE_OLDEST", "false")));
    config.archives(archiveSettings(settings));
    config.archiveStore(archiveStore);
    return config.build();
  }

  /** {@code RUNTIME_FILE_ARCHIVE_*}, as OpenHands names them (and ours); see README. */
  private static ArchiveSettings archiveSettings(Map<String, String> settings) {
    ArchiveSettings defaults = ArchiveSettings.disabled();
    ArchiveSettings archives =
        new ArchiveSettings(
            flag(settings, "RUNTIME_FILE_ARCHIVE_ENABLED"),
            flag(settings, "RUNTIME_FILE_ARCHIVE_REQUIRED"),
            settings.getOrDefault("RUNTIME_FILE_ARCHIVE_FORMAT", defaults.format()).trim(),
            intSetting(settings, "RUNTIME_FILE_ARCHIVE_TIMEOUT")
                .map(Duration::ofSeconds)
                .orElse(defaults.timeout()),
            settings.getOrDefault("RUNTIME_FILE_ARCHIVE_PREFIX", defaults.prefix()).trim());
    if (flag(settings, "RUNTIME_FILE_ARCHIVE_INITIAL_SNAPSHOT")) {
      archives =
          archives.withInitialSnapshot(
              intSetting(settings, "RUNTIME_FILE_ARCHIVE_INITIAL_TIMEOUT")
                  .map(Duration::ofSeconds)
                  .orElse(defaults.initialDeadline()));
    }
    return archives;
  }

  private static boolean flag(Map<String, String> settings, String name) {
    String value = settings.getOrDefault(name, "false").trim();
    return value.equalsIgnoreCase("true") || value.equals("1");
  }

  private static Optional<Integer> intSetting(Map<String, String> settings, String name) {
    String value = settings.get(name);
    if (value == null || value.isBlank()) {
      return Optional.empty();
    }
    try {
      return Optional.of(Integer.parseInt(value.trim()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a whole number, got '" + value + "'");
    }
  }

  /**
   * The secret every sandbox's agent admin key is derived from: {@code PADDOCK_MASTER_SECRET} (set
   * the same on every replica), else a file in the data dir created on first start (0600).
   */
  private static String masterSecret(Map<String, String> settings, Path data) throws IOException {
    String fromEnv = settings.get("PADDOCK_MASTER_SECRET");
    if (fromEnv != null && !fromEnv.isBlank()) {
      return fromEnv;
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

  /** Writes a secret readable by this user only. */
  private static Path writeSecret(Path file, String secret) throws IOException {
    Files.deleteIfExists(file);
    Files.createFile(
        file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(file, secret + "\n");
    return file;
  }
}
