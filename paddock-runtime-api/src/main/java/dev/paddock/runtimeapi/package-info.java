/**
 * The runtime API: OpenHands' remote runtime-API protocol ({@code POST /start}, {@code GET
 * /sessions/{id}}, {@code GET /sessions/batch}, {@code GET /list}, {@code POST
 * /pause|/resume|/stop}, {@code GET /api/warm-runtime-configs}) served over any local {@link
 * dev.paddock.api.spi.SandboxBackend}, plus {@code GET /paddock/capacity}. An OpenHands app server
 * set to {@code RUNTIME=remote} uses it as its runtime API; Paddock's own remote backend uses it to
 * run sandboxes on other machines. Entry points: {@link dev.paddock.runtimeapi.RuntimeApi} and
 * {@link dev.paddock.runtimeapi.RuntimeApiMain}. See docs/REMOTE.md.
 */
package dev.paddock.runtimeapi;
