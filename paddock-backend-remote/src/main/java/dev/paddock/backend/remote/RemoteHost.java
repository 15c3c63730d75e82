package dev.paddock.backend.remote;

import java.net.URI;
import java.util.Objects;

/**
 * One runtime API and its key.
 *
 * @param url its base URL, without a trailing slash (what handles name it by)
 * @param key what it expects in {@code X-API-Key}
 */
record RemoteHost(String url, String key) {
  RemoteHost {
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(key, "key");
  }

  URI resolve(String path) {
    return URI.create(url + path);
  }

  @Override
  public String toString() {
    return url; // never the key
  }
}
