package dev.paddock.agent.files;

import dev.paddock.http.HttpError;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * A client-supplied path, checked and normalised: absolute, at most {@link SafeFs#MAX_PATH_CHARS}
 * characters, no NUL, lexically normalised. A trailing {@code /} (other than {@code /} itself)
 * means the path must name a directory. Error messages quote at most {@link #QUOTED_CHARS}
 * characters of what the client sent.
 *
 * @param path the absolute, normalised path
 * @param directoryOnly whether the text ended with {@code /}
 */
record ClientPath(Path path, boolean directoryOnly) {
  static final int QUOTED_CHARS = 200;

  static ClientPath parse(String raw) {
    if (raw.length() > SafeFs.MAX_PATH_CHARS) {
      throw HttpError.badRequest(
          "path is "
              + raw.length()
              + " characters long; at most "
              + SafeFs.MAX_PATH_CHARS
              + " are allowed");
    }
    if (raw.indexOf('\0') >= 0) {
      throw HttpError.badRequest("path " + quote(raw) + " contains a NUL character");
    }
    if (raw.isEmpty()) {
      throw HttpError.badRequest("path must not be empty");
    }
    Path path;
    try {
      path = Path.of(raw);
    } catch (InvalidPathException e) {
      throw HttpError.badRequest("invalid path " + quote(raw) + ": " + e.getReason());
    }
    if (!path.isAbsolute()) {
      throw HttpError.badRequest("path must be absolute, got " + quote(raw));
    }
    return new ClientPath(path.normalize(), raw.length() > 1 && raw.endsWith("/"));
  }

  /** {@code text} in quotes, cut to {@link #QUOTED_CHARS} characters. */
  static String quote(String text) {
    return text.length() <= QUOTED_CHARS
        ? "'" + text + "'"
        : "'" + text.substring(0, QUOTED_CHARS) + "...' (" + text.length() + " characters)";
  }

  static String quote(Path path) {
    return quote(path.toString());
  }
}
