package dev.paddock.api;

import java.time.Instant;
import java.util.Objects;

/**
 * One stored workspace archive of a sandbox, as listed from its manifest.
 *
 * @param name the archive's name within its sandbox ({@code <conversation or sandbox
 *     id>/<timestamp>.<patch|tar.gz>}), as accepted by {@link WorkspaceArchives#open}
 * @param format {@code tar.gz} or {@code git-delta}
 * @param byteCount the archive's size in bytes
 * @param sha256 the archive's SHA-256, lower-case hex
 * @param createdAt when the capture ended
 */
public record ArchiveInfo(
    String name, String format, long byteCount, String sha256, Instant createdAt) {
  public ArchiveInfo {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(format, "format");
    Objects.requireNonNull(sha256, "sha256");
    Objects.requireNonNull(createdAt, "createdAt");
  }
}
