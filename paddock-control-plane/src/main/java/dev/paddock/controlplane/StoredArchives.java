package dev.paddock.controlplane;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.ArchiveInfo;
import dev.paddock.api.ArchiveStore;
import dev.paddock.api.Caller;
import dev.paddock.api.SandboxException;
import dev.paddock.api.WorkspaceArchives;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Archives read back from the store by their manifests; the owner recorded in each manifest decides
 * who sees it, so this works after the sandbox is gone. Thread-safe.
 */
final class StoredArchives implements WorkspaceArchives {
  private static final Pattern SEGMENT = WorkspaceArchiver.SEGMENT;

  private final Optional<ArchiveStore> store;
  private final String prefix;

  StoredArchives(Optional<ArchiveStore> store, String prefix) {
    this.store = store;
    this.prefix = prefix;
  }

  @Override
  public List<ArchiveInfo> list(Caller caller, String sandboxId) {
    if (store.isEmpty() || !SEGMENT.matcher(sandboxId).matches()) {
      return List.of();
    }
    String dir = prefix + "/" + sandboxId + "/";
    List<ArchiveInfo> found = new ArrayList<>();
    try {
      for (String key : store.get().list(dir)) {
        if (key.endsWith(WorkspaceArchiver.MANIFEST_SUFFIX)) {
          readVisible(caller, key, dir).ifPresent(found::add);
        }
      }
    } catch (IOException e) {
      throw unreadable(sandboxId, e);
    }
    found.sort(Comparator.comparing(ArchiveInfo::createdAt).thenComparing(ArchiveInfo::name));
    return found;
  }

  @Override
  public Optional<InputStream> open(Caller caller, String sandboxId, String name) {
    String[] parts = name.split("/", -1);
    if (store.isEmpty()
        || !SEGMENT.matcher(sandboxId).matches()
        || parts.length != 2
        || !SEGMENT.matcher(parts[0]).matches()
        || !SEGMENT.matcher(parts[1]).matches()
        || name.endsWith(WorkspaceArchiver.MANIFEST_SUFFIX)) {
      return Optional.empty();
    }
    String dir = prefix + "/" + sandboxId + "/";
    try {
      if (readVisible(caller, dir + name + WorkspaceArchiver.MANIFEST_SUFFIX, dir).isEmpty()) {
        return Optional.empty();
      }
      return store.get().open(dir + name);
    } catch (IOException e) {
      throw unreadable(sandboxId, e);
    }
  }

  private Optional<ArchiveInfo> readVisible(Caller caller, String manifestKey, String dir)
      throws IOException {
    Optional<InputStream> in = store.orElseThrow().open(manifestKey);
    if (in.isEmpty()) {
      return Optional.empty();
    }
    Map<String, Object> manifest;
    try (InputStream body = in.get()) {
      manifest = JSON.std.mapFrom(body);
    }
    Optional<String> owner = Optional.ofNullable((String) manifest.get("owner_user_id"));
    if (!caller.mayAccess(owner)) {
      return Optional.empty();
    }
    String name =
        manifestKey.substring(
            dir.length(), manifestKey.length() - WorkspaceArchiver.MANIFEST_SUFFIX.length());
    return Optional.of(
        new ArchiveInfo(
            name,
            (String) manifest.get("format"),
            ((Number) manifest.get("byte_count")).longValue(),
            (String) manifest.get("sha256"),
            Instant.parse((String) manifest.get("created_at"))));
  }

  private static SandboxException unreadable(String sandboxId, IOException e) {
    return new SandboxException(
        "the archive store cannot be read right now; try again", Optional.of(sandboxId), e);
  }
}
