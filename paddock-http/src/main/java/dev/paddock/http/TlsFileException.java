package dev.paddock.http;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A certificate or key file that cannot serve TLS: missing, unreadable, not PEM, of a kind not
 * supported, or a key that does not match the certificate. {@link #part()} says which of the two
 * files is at fault, so a caller can name the setting that points to it.
 */
public final class TlsFileException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  /** Which file of the pair is at fault. */
  public enum Part {
    CERTIFICATE,
    KEY
  }

  private final Part part;
  private final String file;

  TlsFileException(Part part, Path file, String problem) {
    this(part, file, problem, null);
  }

  TlsFileException(Part part, Path file, String problem, Throwable cause) {
    super(problem, cause);
    this.part = Objects.requireNonNull(part, "part");
    this.file = file.toString();
  }

  /** The file at fault. */
  public Part part() {
    return part;
  }

  /** The path of the file at fault, as given. */
  public Path file() {
    return Path.of(file);
  }
}
