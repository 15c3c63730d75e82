package dev.paddock.api;

import java.util.Optional;

/** The specs sandboxes can be made from; read-only, from configuration. Thread-safe. */
public interface SandboxSpecService {
  Page<SandboxSpec> search(PageRequest page);

  Optional<SandboxSpec> get(String specId);

  /** The spec used when a start names none. */
  SandboxSpec defaultSpec();
}
