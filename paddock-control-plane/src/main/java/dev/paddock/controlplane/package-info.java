/**
 * The control plane: {@link dev.paddock.controlplane.ControlPlaneSandboxService} implements {@link
 * dev.paddock.api.SandboxService} over a {@link dev.paddock.store.SandboxStore} and a {@link
 * dev.paddock.api.spi.SandboxBackend}, with key rules, owner scoping, capacity, start-failure
 * messages and restart recovery the same for every backend. {@link
 * dev.paddock.controlplane.ConfiguredSpecService} and {@link
 * dev.paddock.controlplane.ForwardedEnvironment} are the spec pieces backends reuse. Everything
 * else here is package-private.
 */
package dev.paddock.controlplane;
