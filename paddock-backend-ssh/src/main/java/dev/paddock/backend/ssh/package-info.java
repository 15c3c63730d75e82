/**
 * The {@code ssh} backend: sandboxes on already-configured hosts reached over SSH. Only {@link
 * dev.paddock.backend.ssh.SshBackendProvider} is public.
 */
package dev.paddock.backend.ssh;
