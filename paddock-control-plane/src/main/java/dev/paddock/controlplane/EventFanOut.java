package dev.paddock.controlplane;

import dev.paddock.api.LifetimeAction;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import java.time.Duration;
import java.util.List;

/** {@link SandboxEvents#fanOut}: each event to every listener, in order. */
record EventFanOut(List<SandboxEvents> listeners) implements SandboxEvents {
  @Override
  public void created(SandboxInfo sandbox) {
    listeners.forEach(l -> l.created(sandbox));
  }

  @Override
  public void started(String sandboxId, Duration took) {
    listeners.forEach(l -> l.started(sandboxId, took));
  }

  @Override
  public void startFailed(String sandboxId, RuntimeFailure.Kind kind) {
    listeners.forEach(l -> l.startFailed(sandboxId, kind));
  }

  @Override
  public void paused(String sandboxId) {
    listeners.forEach(l -> l.paused(sandboxId));
  }

  @Override
  public void resumed(String sandboxId) {
    listeners.forEach(l -> l.resumed(sandboxId));
  }

  @Override
  public void archived(String sandboxId) {
    listeners.forEach(l -> l.archived(sandboxId));
  }

  @Override
  public void deleting(String sandboxId, RuntimeHandle runtime) {
    listeners.forEach(l -> l.deleting(sandboxId, runtime));
  }

  @Override
  public void deleted(String sandboxId) {
    listeners.forEach(l -> l.deleted(sandboxId));
  }

  @Override
  public void lifetimeEnded(String sandboxId, String reason, LifetimeAction action) {
    listeners.forEach(l -> l.lifetimeEnded(sandboxId, reason, action));
  }

  @Override
  public void queueAdmitted(String sandboxId, Duration waited) {
    listeners.forEach(l -> l.queueAdmitted(sandboxId, waited));
  }

  @Override
  public void queueTimedOut(String sandboxId, Duration waited) {
    listeners.forEach(l -> l.queueTimedOut(sandboxId, waited));
  }
}
