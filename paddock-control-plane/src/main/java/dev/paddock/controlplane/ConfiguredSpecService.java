package dev.paddock.controlplane;

import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.spi.SpecList;
import java.util.List;
import java.util.Optional;

/**
 * Specs from configuration: a fixed list whose first entry is the default, each with the forwarded
 * environment already merged into its {@code initialEnv}. Pages are slices of the list; a page id
 * is the index of the page's first spec. Backends reuse this for their spec service. Immutable.
 */
public final class ConfiguredSpecService implements SandboxSpecService {
  private final SpecList specs;

  private ConfiguredSpecService(SpecList specs) {
    this.specs = specs;
  }

  /**
   * @param specs at least one, with distinct ids; the first is the default
   * @param forwarded merged over every spec's environment
   * @throws IllegalArgumentException when empty or an id repeats
   */
  public static ConfiguredSpecService of(List<SandboxSpec> specs, ForwardedEnvironment forwarded) {
    return new ConfiguredSpecService(
        SpecList.of(SpecList.of(specs).specs().stream().map(forwarded::applyTo).toList()));
  }

  @Override
  public Page<SandboxSpec> search(PageRequest page) {
    return specs.search(page);
  }

  @Override
  public Optional<SandboxSpec> get(String specId) {
    return specs.get(specId);
  }

  @Override
  public SandboxSpec defaultSpec() {
    return specs.defaultSpec();
  }
}
