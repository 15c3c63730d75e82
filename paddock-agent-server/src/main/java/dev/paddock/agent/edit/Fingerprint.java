package dev.paddock.agent.edit;

import dev.paddock.agent.files.SafeFs;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One version of a file as the file system shows it: size, modification time (nanoseconds) and
 * inode. An edit writes a new inode, so a file another process changed since the editor last wrote
 * it has another fingerprint. {@code fileKey} is empty for a file that does not exist.
 */
record Fingerprint(long size, long modifiedNanos, Optional<Object> fileKey) {
  static final Fingerprint ABSENT = new Fingerprint(-1, -1, Optional.empty());

  static Fingerprint of(BasicFileAttributes attributes) {
    return new Fingerprint(
        attributes.size(),
        attributes.lastModifiedTime().to(TimeUnit.NANOSECONDS),
        Optional.ofNullable(attributes.fileKey()));
  }

  /** The placed file's fingerprint now, {@link #ABSENT} when it does not exist. */
  static Fingerprint of(SafeFs.Placement at) throws IOException {
    try {
      return of(at.parent().attributes(at.name()));
    } catch (NoSuchFileException e) {
      return ABSENT;
    }
  }
}
