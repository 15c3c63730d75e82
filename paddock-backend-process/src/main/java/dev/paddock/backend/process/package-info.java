/**
 * The {@code process} backend: each sandbox is a local agent-server child process in its own
 * directory. It isolates nothing (see docs/SECURITY.md); it exists for development and tests. Only
 * {@link dev.paddock.backend.process.ProcessBackendProvider} is public; everything else is an
 * implementation detail.
 */
package dev.paddock.backend.process;
