package dev.paddock.archive.s3;

import dev.paddock.api.ArchiveStore;

/** Creates S3-compatible archive stores. */
public final class S3ArchiveStores {
  private S3ArchiveStores() {}

  /**
   * A store in {@code config}'s bucket: objects up to the part size are one {@code PutObject},
   * larger ones a multipart upload read part by part from the file (never the whole object in
   * memory); reads are streamed. Close it to release its HTTP connections.
   */
  public static ArchiveStore create(S3ArchiveConfig config) {
    return S3ArchiveStore.open(config);
  }
}
