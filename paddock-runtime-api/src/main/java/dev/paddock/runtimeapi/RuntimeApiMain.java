package dev.paddock.runtimeapi;

import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.settings.CommonSettings;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.api.spi.SandboxBackendProvider;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CountDownLatch;

/**
 * Runs a runtime API over the local backend {@code RUNTIME} names (process by default), with its
 * settings from {@code settings} (the environment, for {@link #main}). What {@code paddock
 * runtime-api} runs; tests start it as a process of its own.
 */
public final class RuntimeApiMain {
  /** {@code RUNTIME}: the local backend under the runtime API. */
  public static final Setting<String> RUNTIME =
      Setting.string("RUNTIME", "the local backend that runs the sessions").withDefault("process");

  private RuntimeApiMain() {}

  /** Starts from the environment and serves until the JVM stops. */
  public static void main(String[] args) throws InterruptedException {
    serveUntilStopped(System.getenv());
  }

  /**
   * Starts a runtime API as {@code settings} say, prints its address on standard output (the line
   * {@code paddock runtime API listening on http://HOST:PORT ...}) and serves until the JVM stops.
   *
   * @throws IllegalArgumentException naming the invalid or missing setting
   */
  public static void serveUntilStopped(Map<String, String> settings) throws InterruptedException {
    Running running = start(settings);
    System.out.println(
        "paddock runtime API listening on http://"
            + running.host()
            + ":"
            + running.api().port()
            + " (runtime "
            + running.backend().name()
            + ")");
    System.out.flush();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  running.api().close();
                  running.backend().close();
                  stopped.countDown();
                }));
    stopped.await();
  }

  /** A started runtime API, its backend and the address it bound. */
  public record Running(RuntimeApi api, SandboxBackend backend, String host) {}

  /**
   * Starts a runtime API as {@code settings} say (the backend's settings included).
   *
   * @throws IllegalArgumentException naming the invalid or missing setting
   */
  public static Running start(Map<String, String> settings) {
    SandboxBackendProvider provider = provider(runtime(settings));
    List<Setting<?>> declared = new ArrayList<>(RuntimeApiSettings.ALL);
    declared.add(RUNTIME);
    declared.addAll(CommonSettings.ALL);
    declared.addAll(provider.settings());
    Settings typed = Settings.of(declared, settings);
    String key =
        typed
            .find(RuntimeApiSettings.KEY)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        RuntimeApiSettings.KEY.name()
                            + " is required: the key callers send in X-API-Key"));
    Map<String, String> handedOn = new LinkedHashMap<>(settings);
    handedOn.putAll(typed.values());
    SandboxBackend backend = provider.create(handedOn);
    SandboxSpecService specs = provider.specs(handedOn);
    String host = typed.get(RuntimeApiSettings.HOST);
    RuntimeApiConfig config =
        new RuntimeApiConfig(
            host,
            typed.get(RuntimeApiSettings.PORT),
            key,
            typed.get(RuntimeApiSettings.MAX_SANDBOXES),
            typed.find(RuntimeApiSettings.SECRET).orElseGet(RuntimeKeys::randomSecret),
            CommonSettings.dataDir(typed));
    try {
      return new Running(RuntimeApi.start(config, backend, specs), backend, host);
    } catch (RuntimeException e) {
      backend.close();
      throw e;
    }
  }

  private static String runtime(Map<String, String> settings) {
    return Settings.of(List.of(RUNTIME), settings).get(RUNTIME);
  }

  private static SandboxBackendProvider provider(String name) {
    List<String> known = new ArrayList<>();
    for (SandboxBackendProvider provider : ServiceLoader.load(SandboxBackendProvider.class)) {
      if (provider.names().contains(name)) {
        if (provider.names().contains("remote")) {
          break;
        }
        return provider;
      }
      known.addAll(provider.names());
    }
    known.remove("remote");
    throw new IllegalArgumentException(
        RUNTIME.name() + "='" + name + "' is not a local backend here: expected one of " + known);
  }
}
