/**
 * The Docker backend: one container per sandbox through the Docker Engine API, the agent-server
 * mounted read-only from a self-contained runtime bundle, commands as an unprivileged user, limits
 * from the spec.
 */
package dev.paddock.backend.docker;
