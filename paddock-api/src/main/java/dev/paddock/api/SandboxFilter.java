package dev.paddock.api;

import java.util.EnumSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Which sandboxes a search returns: all conditions must hold.
 *
 * @param statuses the stored statuses to include; empty: any
 * @param labels labels the sandbox must carry with exactly these values; empty: any
 * @param specId the spec it was made from; empty: any
 */
public record SandboxFilter(
    Set<SandboxStatus> statuses, Map<String, String> labels, Optional<String> specId) {
  /** Every sandbox. */
  public static final SandboxFilter ALL = new SandboxFilter(Set.of(), Map.of(), Optional.empty());

  public SandboxFilter {
    statuses = statuses.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(statuses));
    labels = java.util.Collections.unmodifiableMap(new TreeMap<>(labels));
    Objects.requireNonNull(specId, "specId");
  }

  public boolean isAll() {
    return statuses.isEmpty() && labels.isEmpty() && specId.isEmpty();
  }
}
