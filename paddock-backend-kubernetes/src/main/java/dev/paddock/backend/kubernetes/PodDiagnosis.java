package dev.paddock.backend.kubernetes;

import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.backend.kit.StartDiagnosis;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStateWaiting;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Why a sandbox's pod is not running, read from what the cluster wrote: container waiting reasons
 * and terminations, the {@code PodScheduled} condition, the pod's phase and, for a pod still
 * pending when the wait ends, its events. Each finding becomes a {@link RuntimeFailure} whose safe
 * message is built from fixed text and safe facts only (resource names, exit codes); what the
 * cluster said (node names, image references, registry errors) is the raw detail, for the log.
 *
 * <p>The reasons are the kubelet's and the scheduler's own words: {@code ErrImagePull}, {@code
 * ImagePullBackOff}, {@code CreateContainerConfigError}, {@code CreateContainerError}, {@code
 * Unschedulable} with "Insufficient cpu" or "untolerated taint", {@code OOMKilled}, {@code
 * Evicted}.
 */
final class PodDiagnosis {
  static final Kind CONFIG_ERROR =
      Kind.of(
          "kubernetes.config-error",
          "The cluster refused the sandbox's container configuration (a missing secret, volume or"
              + " setting).");
  static final Kind CREATE_ERROR =
      Kind.of("kubernetes.create-error", "The cluster's node could not create the sandbox.");
  static final Kind UNSCHEDULABLE =
      Kind.of(
          "kubernetes.unschedulable",
          "No node in the cluster can run the sandbox (none matches its node selector or has"
              + " room).");
  static final Kind UNTOLERATED_TAINT =
      Kind.of(
          "kubernetes.untolerated-taint",
          "No node accepts the sandbox: the nodes it could run on are tainted and it does not"
              + " tolerate the taint.");
  static final Kind INSUFFICIENT =
      Kind.of(
          "kubernetes.insufficient-resources",
          "No node has enough free resources for the sandbox right now. Please try again in a few"
              + " minutes.");
  static final Kind VOLUME =
      Kind.of(
          "kubernetes.volume",
          "The sandbox's workspace volume could not be provisioned or mounted.");
  static final Kind AGENT_COPY =
      Kind.of(
          "kubernetes.agent-copy",
          "The sandbox's pod could not install the agent from the Paddock agent image.");
  static final Kind STOPPED =
      Kind.of(
          "kubernetes.stopped",
          "The sandbox's pod stopped; its workspace is kept: resume the sandbox to restart it.");
  static final Kind OOM_KILLED =
      Kind.of(
          "kubernetes.oom-killed",
          "The sandbox was killed for using too much memory; its workspace is kept: resume the"
              + " sandbox to restart it.");
  static final Kind EVICTED =
      Kind.of(
          "kubernetes.evicted",
          "The cluster evicted the sandbox's pod from its node; its workspace is kept: resume the"
              + " sandbox to restart it.");
  static final Kind POD_GONE =
      Kind.of(
          "kubernetes.pod-gone",
          "The sandbox's pod was removed outside Paddock; its workspace is kept: resume the"
              + " sandbox to restart it.");
  static final Kind NODE_LOST =
      Kind.of("kubernetes.node-lost", "The cluster lost contact with the sandbox's node.");

  /** The resources the scheduler names in "Insufficient X" that are safe to repeat. */
  private static final List<String> RESOURCES =
      List.of("cpu", "memory", "pods", "ephemeral-storage");

  private static final Set<String> IMAGE_REASONS =
      Set.of(
          "ErrImagePull",
          "ImagePullBackOff",
          "InvalidImageName",
          "ErrImageNeverPull",
          "RegistryUnavailable");
  private static final Pattern INSUFFICIENT_RESOURCE =
      Pattern.compile("Insufficient ([\\w./-]*\\w)");

  private PodDiagnosis() {}

  /**
   * A failure waiting will not mend: an image that cannot be pulled, a container the node refused,
   * a container that ended (the pods never restart), an evicted pod, a lost node.
   *
   * @param started whether the agent had answered before (a crash), or the pod is still starting
   */
  static Optional<RuntimeFailure> fatal(Pod pod, boolean started) {
    for (ContainerStatus status : statuses(status(pod).getInitContainerStatuses())) {
      Optional<RuntimeFailure> failure = waiting(status);
      if (failure.isPresent()) {
        return failure;
      }
      ContainerStateTerminated ended = terminated(status);
      if (ended != null && exitCode(ended) != 0) {
        return Optional.of(
            new RuntimeFailure(AGENT_COPY, "init container " + raw(status.getName(), ended)));
      }
    }
    for (ContainerStatus status : statuses(status(pod).getContainerStatuses())) {
      Optional<RuntimeFailure> failure = waiting(status);
      if (failure.isPresent()) {
        return failure;
      }
      ContainerStateTerminated ended = terminated(status);
      if (ended != null) {
        return Optional.of(ended(ended, started, status.getName()));
      }
    }
    String phase = String.valueOf(status(pod).getPhase());
    String reason = String.valueOf(status(pod).getReason());
    if (phase.equals("Failed") || phase.equals("Succeeded")) {
      Kind kind = reason.equals("Evicted") ? EVICTED : STOPPED;
      return Optional.of(
          new RuntimeFailure(kind, "pod " + phase + " (" + reason + "): " + message(pod)));
    }
    if (phase.equals("Unknown")) {
      return Optional.of(new RuntimeFailure(NODE_LOST, "pod phase Unknown: " + message(pod)));
    }
    return Optional.empty();
  }

  /**
   * Why a pod is still not running when the wait for it ends: the scheduler's verdict, else what
   * its events say, else that the agent never answered.
   */
  static RuntimeFailure pending(Pod pod, List<Event> events) {
    Optional<PodCondition> unscheduled =
        status(pod).getConditions().stream()
            .filter(c -> "PodScheduled".equals(c.getType()) && "False".equals(c.getStatus()))
            .findFirst();
    if (unscheduled.isPresent()) {
      return unschedulable(String.valueOf(unscheduled.get().getMessage()));
    }
    for (Event event : events) {
      String reason = String.valueOf(event.getReason());
      String detail = "event " + reason + ": " + event.getMessage();
      switch (reason) {
        case "FailedScheduling" -> {
          return unschedulable(String.valueOf(event.getMessage()));
        }
        case "FailedMount", "FailedAttachVolume", "ProvisioningFailed" -> {
          return new RuntimeFailure(VOLUME, detail);
        }
        case "FailedCreatePodSandBox" -> {
          return new RuntimeFailure(CREATE_ERROR, detail);
        }
        default -> {
          // not a reason we classify; the next event may be
        }
      }
    }
    return new RuntimeFailure(
        Kind.NEVER_READY,
        "pod " + status(pod).getPhase() + ", the agent did not answer: " + message(pod));
  }

  /** The scheduler's message ("0/3 nodes are available: 3 Insufficient cpu. ...") classified. */
  static RuntimeFailure unschedulable(String message) {
    List<String> short_ = new ArrayList<>();
    Matcher m = INSUFFICIENT_RESOURCE.matcher(message);
    while (m.find()) {
      if (RESOURCES.contains(m.group(1)) && !short_.contains(m.group(1))) {
        short_.add(m.group(1));
      }
    }
    String detail = "unschedulable: " + message;
    if (!short_.isEmpty()) {
      return new RuntimeFailure(
          INSUFFICIENT,
          "No node has enough free "
              + String.join(" and ", short_)
              + " for the sandbox right now. Please try again in a few minutes.",
          detail);
    }
    String lower = message.toLowerCase(Locale.ROOT);
    if (lower.contains("untolerated taint") || lower.contains("had taint")) {
      return new RuntimeFailure(UNTOLERATED_TAINT, detail);
    }
    if (lower.contains("persistentvolumeclaim") || lower.contains("volume")) {
      return new RuntimeFailure(VOLUME, detail);
    }
    return new RuntimeFailure(UNSCHEDULABLE, detail);
  }

  private static Optional<RuntimeFailure> waiting(ContainerStatus status) {
    ContainerStateWaiting waiting =
        status.getState() == null ? null : status.getState().getWaiting();
    if (waiting == null || waiting.getReason() == null) {
      return Optional.empty();
    }
    String reason = waiting.getReason();
    String detail =
        "container " + status.getName() + " waiting: " + reason + ": " + waiting.getMessage();
    if (IMAGE_REASONS.contains(reason)) {
      return Optional.of(new RuntimeFailure(Kind.IMAGE_MISSING, detail));
    }
    return switch (reason) {
      case "CreateContainerConfigError" -> Optional.of(new RuntimeFailure(CONFIG_ERROR, detail));
      case "CreateContainerError", "RunContainerError" ->
          Optional.of(new RuntimeFailure(CREATE_ERROR, detail));
      default -> Optional.empty(); // ContainerCreating, PodInitializing: still on its way
    };
  }

  private static RuntimeFailure ended(
      ContainerStateTerminated ended, boolean started, String container) {
    int code = exitCode(ended);
    String detail = "container " + raw(container, ended);
    if ("OOMKilled".equals(ended.getReason())) {
      return new RuntimeFailure(started ? OOM_KILLED : Kind.OUT_OF_MEMORY, detail);
    }
    if (started) {
      return new RuntimeFailure(
          STOPPED,
          "The sandbox's pod stopped ("
              + StartDiagnosis.exitText(code)
              + "); its workspace is kept: resume the sandbox to restart it.",
          detail);
    }
    if (code >= 121 && code <= 123) {
      // The entry script's image checks: no glibc, no bash, no setpriv.
      return new RuntimeFailure(Kind.IMAGE_UNSUITABLE, detail);
    }
    List<String> tail =
        ended.getMessage() == null ? List.of() : ended.getMessage().lines().toList();
    return StartDiagnosis.exited(code, tail).failure();
  }

  private static String raw(String container, ContainerStateTerminated ended) {
    return container
        + " "
        + StartDiagnosis.exitText(exitCode(ended))
        + " ("
        + ended.getReason()
        + ")"
        + (ended.getMessage() == null ? "" : ": " + ended.getMessage());
  }

  private static int exitCode(ContainerStateTerminated ended) {
    return ended.getExitCode() == null ? -1 : ended.getExitCode();
  }

  private static ContainerStateTerminated terminated(ContainerStatus status) {
    return status.getState() == null ? null : status.getState().getTerminated();
  }

  private static List<ContainerStatus> statuses(List<ContainerStatus> statuses) {
    return statuses == null ? List.of() : statuses;
  }

  /** The pod's status; an empty one for a pod nobody has written status to yet. */
  static PodStatus status(Pod pod) {
    return pod.getStatus() == null ? new PodStatus() : pod.getStatus();
  }

  private static String message(Pod pod) {
    return String.valueOf(status(pod).getMessage());
  }
}
