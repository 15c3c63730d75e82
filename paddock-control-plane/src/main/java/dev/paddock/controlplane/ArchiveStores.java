package dev.paddock.controlplane;

import dev.paddock.api.ArchiveStore;
import java.nio.file.Path;

/** The archive stores that come with the control plane. */
public final class ArchiveStores {
  private ArchiveStores() {}

  /**
   * A store in the local directory {@code root} (created when missing): one file per key, written
   * to a temporary file beside it and renamed into place.
   */
  public static ArchiveStore directory(Path root) {
    return new DirectoryArchiveStore(root.toAbsolutePath().normalize());
  }
}
