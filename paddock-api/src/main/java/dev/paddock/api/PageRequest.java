package dev.paddock.api;

import java.util.Objects;
import java.util.Optional;

/**
 * Which page to return.
 *
 * @param pageId the previous page's {@code nextPageId}, or empty for the first page
 * @param limit at most this many items, 1 to 100
 */
public record PageRequest(Optional<String> pageId, int limit) {
  public static final int MAX_LIMIT = 100;

  public PageRequest {
    Objects.requireNonNull(pageId, "pageId");
    if (limit < 1 || limit > MAX_LIMIT) {
      throw new IllegalArgumentException("limit must be 1.." + MAX_LIMIT + ", got " + limit);
    }
  }

  public static PageRequest first(int limit) {
    return new PageRequest(Optional.empty(), limit);
  }
}
