/**
 * The backend SPI: what a runtime reality (local processes, Docker, Kubernetes, a remote runtime
 * API) implements so the control plane can drive it. Backends are found with {@link
 * java.util.ServiceLoader} through {@link dev.paddock.api.spi.SandboxBackendProvider} and chosen by
 * one setting ({@code RUNTIME}). Key rules, owners, capacity and the store live in the control
 * plane, identical for every backend; a backend only makes runtimes real and reports what they are
 * doing.
 */
package dev.paddock.api.spi;
