package dev.paddock.api.spi;

import dev.paddock.api.InvalidRequestException;
import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Specs from a fixed list whose first entry is the default: pages are slices of the list, a page id
 * is the index of the page's first spec. What most backends' spec services are. Immutable.
 */
public final class SpecList implements SandboxSpecService {
  private final List<SandboxSpec> specs;

  private SpecList(List<SandboxSpec> specs) {
    this.specs = specs;
  }

  /**
   * @param specs at least one, with distinct ids; the first is the default
   * @throws IllegalArgumentException when empty or an id repeats
   */
  public static SpecList of(List<SandboxSpec> specs) {
    if (specs.isEmpty()) {
      throw new IllegalArgumentException("at least one sandbox spec must be configured");
    }
    Set<String> ids = new HashSet<>();
    for (SandboxSpec spec : specs) {
      if (!ids.add(spec.id())) {
        throw new IllegalArgumentException("sandbox spec id '" + spec.id() + "' is used twice");
      }
    }
    return new SpecList(List.copyOf(specs));
  }

  /** The specs, default first. */
  public List<SandboxSpec> specs() {
    return specs;
  }

  @Override
  public Page<SandboxSpec> search(PageRequest page) {
    int from = page.pageId().map(SpecList::index).orElse(0);
    int to = Math.min(specs.size(), from + page.limit());
    Optional<String> next =
        to < specs.size() ? Optional.of(Integer.toString(to)) : Optional.empty();
    return new Page<>(specs.subList(Math.min(from, to), to), next);
  }

  @Override
  public Optional<SandboxSpec> get(String specId) {
    return specs.stream().filter(s -> s.id().equals(specId)).findFirst();
  }

  @Override
  public SandboxSpec defaultSpec() {
    return specs.get(0);
  }

  private static int index(String pageId) {
    try {
      int index = Integer.parseInt(pageId);
      if (index >= 0) {
        return index;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw InvalidRequestException.badRequest("invalid page id '" + pageId + "'");
  }
}
