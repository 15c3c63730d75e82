package dev.paddock.controlplane;

import java.util.List;

/**
 * What one {@link ControlPlaneSandboxService#reconcile()} pass changed, by sandbox id.
 *
 * @param adopted stored sandboxes whose runtime is alive; their status now follows it
 * @param missing stored sandboxes whose runtime is gone: now MISSING, key revoked
 * @param failedStarts sandboxes left STARTING by a start that died with an earlier control plane:
 *     now ERROR, key revoked
 * @param reaped runtimes with no stored sandbox: destroyed
 * @param takenOver sandboxes whose operation a gone replica left unfinished: finished or undone
 *     (see docs/CONTROL-PLANE.md, "Several replicas")
 */
public record ReconcileReport(
    List<String> adopted,
    List<String> missing,
    List<String> failedStarts,
    List<String> reaped,
    List<String> takenOver) {
  public ReconcileReport {
    takenOver = List.copyOf(takenOver);
    adopted = List.copyOf(adopted);
    missing = List.copyOf(missing);
    failedStarts = List.copyOf(failedStarts);
    reaped = List.copyOf(reaped);
  }
}
