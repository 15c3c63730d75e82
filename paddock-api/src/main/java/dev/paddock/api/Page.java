package dev.paddock.api;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One page of results.
 *
 * @param items the results, in the listing's order
 * @param nextPageId pass to the next request to continue; empty on the last page
 */
public record Page<T>(List<T> items, Optional<String> nextPageId) {
  public Page {
    items = List.copyOf(items);
    Objects.requireNonNull(nextPageId, "nextPageId");
  }
}
