package dev.paddock.runtimeapi;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The JSON shapes of the protocol: OpenHands' {@code RuntimeInfo} with both status fields (newer
 * app servers read {@code status}, older ones and the SDK {@code pod_status}), the pod fields the
 * SDK logs, and Paddock's {@code paddock_*} additions.
 */
final class RuntimeWire {
  private RuntimeWire() {}

  /**
   * {@code status}: running, starting, paused, error, stopped (the runtime vanished) — the values
   * OpenHands' remote sandbox service maps.
   */
  static String status(RuntimeSessions.Live live) {
    return switch (live.status()) {
      case RUNNING -> "running";
      case QUEUED, STARTING -> "starting";
      case PAUSED -> "paused";
      case ERROR -> "error";
      case MISSING -> "stopped";
    };
  }

  /**
   * {@code pod_status} as a Kubernetes runtime API reports it: ready (agent answering), pending
   * (being made), running (process up, agent not answering yet: "Running is not yet Ready"),
   * failed, unknown (state unreadable), not found (paused or gone: no pod). Never crashloopbackoff:
   * Paddock does not restart a failed agent behind the caller's back.
   */
  static String podStatus(RuntimeSessions.Live live) {
    if (live.unreadable()) {
      return "unknown";
    }
    return switch (live.status()) {
      case RUNNING -> "ready";
      case STARTING -> live.session().handle().isPresent() ? "running" : "pending";
      case QUEUED -> "pending";
      case PAUSED, MISSING -> "not found";
      case ERROR -> "failed";
    };
  }

  static Map<String, Object> runtime(RuntimeSessions.Live live, Optional<String> key) {
    Session session = live.session();
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("session_id", session.sessionId());
    json.put("runtime_id", session.runtimeId());
    json.put("url", live.agentUrl().orElse(null));
    json.put("session_api_key", key.orElse(null));
    json.put("status", status(live));
    json.put("pod_status", podStatus(live));
    json.put("status_detail", detail(live).orElse(null));
    json.put("image", session.request().spec().imageReference());
    json.put("created_at", session.createdAt().toString());
    json.put("resource_factor", session.resourceFactor());
    json.put("restart_count", 0);
    json.put("restart_reasons", List.of());
    json.put("container_statuses", List.of());
    json.put("events", List.of());
    json.put("work_hosts", Map.of());
    json.put("paddock_client", session.client().orElse(null));
    json.put(
        "paddock_failure_kind",
        live.status() == SandboxStatus.ERROR
            ? session.failure().map(f -> f.kind().id()).orElse("UNKNOWN")
            : null);
    json.put(
        "paddock_failure_message",
        live.status() == SandboxStatus.ERROR ? detail(live).orElse(null) : null);
    json.put(
        "paddock_unenforced", session.handle().map(h -> h.unenforcedLimits()).orElse(List.of()));
    return json;
  }

  /** A short safe explanation: the failure's class message, never the raw runtime detail. */
  private static Optional<String> detail(RuntimeSessions.Live live) {
    if (live.unreadable()) {
      return Optional.of("The runtime's state cannot be read right now.");
    }
    if (live.status() != SandboxStatus.ERROR) {
      return Optional.empty();
    }
    return Optional.of(
        live.session().failure().map(f -> f.safeMessage()).orElse("The sandbox's runtime failed."));
  }

  /** One warm runtime config ({@code GET /api/warm-runtime-configs}) per local spec. */
  static Map<String, Object> warmConfig(SandboxSpec spec) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("name", spec.id());
    json.put("image", spec.imageReference());
    json.put("command", spec.command());
    json.put("environment", spec.initialEnv());
    json.put("working_dir", spec.workingDir());
    return json;
  }
}
