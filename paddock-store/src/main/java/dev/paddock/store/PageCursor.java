package dev.paddock.store;

import dev.paddock.api.InvalidRequestException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Where a newest-first page ended: the last item's creation time and id. Encoded as base64url of
 * {@code "<epoch millis>:<id>"}; the next page starts strictly after it, so inserts (which land
 * before or after the cursor, never at it) neither repeat nor skip items.
 */
record PageCursor(long createdAtMillis, String id) {
  String encode() {
    String plain = createdAtMillis + ":" + id;
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(plain.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * @throws IllegalArgumentException when {@code pageId} is not one this store issued
   */
  static PageCursor decode(String pageId) {
    try {
      String plain = new String(Base64.getUrlDecoder().decode(pageId), StandardCharsets.UTF_8);
      int colon = plain.indexOf(':');
      return new PageCursor(Long.parseLong(plain.substring(0, colon)), plain.substring(colon + 1));
    } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
      InvalidRequestException invalid =
          InvalidRequestException.badRequest(
              "Page id '" + pageId + "' is not valid: pass the nextPageId of a previous page");
      invalid.initCause(e);
      throw invalid;
    }
  }
}
