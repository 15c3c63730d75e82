/**
 * The {@code remote} backend: sandboxes run by one or more runtime APIs ({@code paddock
 * runtime-api} on other machines, or any service speaking OpenHands' runtime-API protocol), placed
 * by the free capacity each reports, each staying on the host that took it. The control plane keeps
 * its store row per sandbox (owner, spec, key hash, created_at and the handle naming the host); the
 * runtime API is the truth about what runs now. See docs/REMOTE.md.
 */
package dev.paddock.backend.remote;
