package dev.paddock.agent.watch;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One coalesced change under a watched root.
 *
 * @param type {@code created}, {@code modified}, {@code deleted} or {@code moved}
 * @param path the path relative to the root ({@code /}-separated)
 * @param from for {@code moved}, the old relative path; else empty
 * @param kind {@code file}, {@code directory}, {@code symlink} or {@code other}; {@code unknown}
 *     for a deleted entry the watch never saw
 */
record Change(String type, String path, String from, String kind) {
  Map<String, Object> toJson() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("type", type);
    json.put("path", path);
    if (!from.isEmpty()) {
      json.put("from", from);
    }
    json.put("kind", kind);
    return json;
  }
}
