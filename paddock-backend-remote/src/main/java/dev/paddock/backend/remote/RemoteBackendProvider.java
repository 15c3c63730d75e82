package dev.paddock.backend.remote;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.api.spi.SandboxBackendProvider;
import dev.paddock.api.spi.SpecList;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code remote} backend: sandboxes on the runtime APIs {@code PADDOCK_REMOTE_RUNTIMES} lists
 * (each a {@code paddock runtime-api}, which keys its agents with this control plane's key
 * digests). Specs are the runtime APIs' warm runtime configs ({@code GET
 * /api/warm-runtime-configs}), first host's first config the default.
 */
public final class RemoteBackendProvider implements SandboxBackendProvider {
  /** For {@link java.util.ServiceLoader}. */
  public RemoteBackendProvider() {}

  @Override
  public List<String> names() {
    return List.of(RemoteBackend.NAME);
  }

  @Override
  public List<Setting<?>> settings() {
    return RemoteSettings.DECLARED;
  }

  /**
   * @throws IllegalArgumentException naming the setting that is missing or invalid
   */
  @Override
  public SandboxBackend create(Map<String, String> settings) {
    return new RemoteBackend(RemoteSettings.from(settings));
  }

  /**
   * @throws IllegalStateException when no runtime API answers with a config
   */
  @Override
  public SandboxSpecService specs(Map<String, String> settings) {
    RemoteSettings remote = RemoteSettings.from(settings);
    Map<String, SandboxSpec> specs = new LinkedHashMap<>();
    List<String> problems = new ArrayList<>();
    try (RuntimeApiClient client = new RuntimeApiClient(remote.timeout())) {
      for (RemoteHost host : remote.hosts()) {
        try {
          RuntimeApiClient.Reply reply = client.get(host, "/api/warm-runtime-configs");
          for (Object config : RuntimeApiClient.list(reply.object().get("configs"))) {
            if (config instanceof Map<?, ?> map && map.get("name") instanceof String name) {
              specs.putIfAbsent(name, spec(name, map));
            }
          }
        } catch (RuntimeException e) {
          problems.add(host + ": " + e.getMessage());
        }
      }
    }
    if (specs.isEmpty()) {
      throw new IllegalStateException(
          "no runtime API in "
              + RemoteSettings.RUNTIMES.name()
              + " lists a warm runtime config "
              + problems);
    }
    return SpecList.of(List.copyOf(specs.values()));
  }

  private static SandboxSpec spec(String name, Map<?, ?> config) {
    SandboxSpec.Builder spec = SandboxSpec.builder(name);
    if (config.get("image") instanceof String image && !image.equals(name)) {
      spec.image(image);
    }
    if (config.get("command") instanceof List<?> command) {
      spec.command(command.stream().map(String::valueOf).toList());
    }
    if (config.get("environment") instanceof Map<?, ?> env) {
      Map<String, String> strings = new LinkedHashMap<>();
      env.forEach((k, v) -> strings.put(String.valueOf(k), String.valueOf(v)));
      spec.env(strings);
    }
    if (config.get("working_dir") instanceof String dir) {
      spec.workingDir(dir);
    }
    return spec.build();
  }
}
