package dev.paddock.api;

import java.io.InputStream;
import java.util.List;
import java.util.Optional;

/**
 * Reading back the workspace archives of sandboxes, also after they were deleted. Owner-scoped as
 * sandboxes are: a caller sees only archives of sandboxes it owned (an admin sees all); others are
 * "not found". Thread-safe.
 */
public interface WorkspaceArchives {
  /** The caller's archives of {@code sandboxId}, oldest first; empty when there are none. */
  List<ArchiveInfo> list(Caller caller, String sandboxId);

  /**
   * The archive {@code name} (see {@link ArchiveInfo#name()}) of {@code sandboxId}, to be closed by
   * the caller; empty when there is none or the caller may not see it.
   *
   * @throws SandboxException when the archive store cannot be read
   */
  Optional<InputStream> open(Caller caller, String sandboxId, String name);
}
