package dev.paddock.store;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/** A runtime handle's attributes as a flat JSON object of strings, keys sorted. */
final class RuntimeAttributes {
  private RuntimeAttributes() {}

  static String toJson(Map<String, String> attributes) {
    try {
      return JSON.std.asString(new TreeMap<>(attributes));
    } catch (IOException e) {
      throw new StoreException("Could not write runtime attributes as JSON: " + e.getMessage(), e);
    }
  }

  /**
   * @throws StoreException when the stored text is not a flat JSON object of strings
   */
  static Map<String, String> fromJson(String json, String sandboxId) {
    Map<String, Object> parsed;
    try {
      parsed = JSON.std.mapFrom(json);
    } catch (IOException e) {
      throw corrupt(sandboxId, e.getMessage());
    }
    Map<String, String> attributes = new LinkedHashMap<>();
    for (Map.Entry<String, Object> entry : parsed.entrySet()) {
      if (!(entry.getValue() instanceof String value)) {
        throw corrupt(sandboxId, "attribute '" + entry.getKey() + "' is not a string");
      }
      attributes.put(entry.getKey(), value);
    }
    return attributes;
  }

  private static StoreException corrupt(String sandboxId, String why) {
    return new StoreException(
        "Stored runtime attributes of sandbox '"
            + sandboxId
            + "' are not a JSON object of strings ("
            + why
            + "); the row was changed outside Paddock");
  }
}
