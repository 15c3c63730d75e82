package dev.paddock.cli;

import dev.paddock.api.Caller;
import dev.paddock.api.SandboxService;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.server.gateway.Gateway;
import dev.paddock.server.gateway.GatewayConfig;
import dev.paddock.server.gateway.SandboxKeys;
import dev.paddock.server.gateway.SandboxResumer;
import dev.paddock.store.SandboxStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** The settings of the sandbox gateway (docs/GATEWAY.md), and the gateway they describe. */
final class GatewaySettings {
  static final Setting<String> GATEWAY =
      Setting.oneOf(
              "PADDOCK_GATEWAY",
              "route sandbox traffic through the control plane (on) or expose agents directly (off)",
              "on",
              "off")
          .withDefault("on");
  static final Setting<String> DOMAIN =
      Setting.string(
          "PADDOCK_GATEWAY_DOMAIN",
          "wildcard domain of host mode, {port}-{id}.<domain> (unset: path mode only)");
  static final Setting<Duration> IDLE_TIMEOUT =
      Setting.duration(
              "PADDOCK_GATEWAY_IDLE_TIMEOUT",
              "how long a sandbox may send nothing before a relayed request is cut")
          .withDefault(Duration.ofSeconds(300));

  static final List<Setting<?>> ALL = List.of(GATEWAY, DOMAIN, IDLE_TIMEOUT);

  private static final Duration RESUME_WAIT = Duration.ofSeconds(60);

  private GatewaySettings() {}

  /**
   * Auto-resume through {@code service}, as the control plane itself (the gateway checked the
   * request's credential for the sandbox), waiting until its agent answers.
   */
  static SandboxResumer resumer(SandboxService service) {
    Caller gateway = Caller.admin("paddock-gateway");
    return sandboxId -> {
      service
          .resume(gateway, sandboxId)
          .orElseThrow(() -> new IllegalStateException("sandbox " + sandboxId + " is gone"));
      service.waitUntilRunning(gateway, sandboxId, RESUME_WAIT);
    };
  }

  /** The gateway the settings ask for; empty when {@code PADDOCK_GATEWAY=off}. */
  static Optional<Gateway> gateway(
      Settings settings,
      String masterSecret,
      SandboxStore store,
      SandboxBackend backend,
      SandboxKeys keys,
      SandboxResumer resumer) {
    if (settings.get(GATEWAY).equals("off")) {
      return Optional.empty();
    }
    GatewayConfig.Builder config =
        GatewayConfig.builder(masterSecret).idleTimeout(settings.get(IDLE_TIMEOUT));
    settings.find(DOMAIN).filter(d -> !d.isBlank()).ifPresent(config::domain);
    return Optional.of(Gateway.create(store, backend, keys, resumer, config.build()));
  }
}
