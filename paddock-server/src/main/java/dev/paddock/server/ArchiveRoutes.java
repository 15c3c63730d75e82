package dev.paddock.server;

import dev.paddock.api.ArchiveInfo;
import dev.paddock.api.WorkspaceArchives;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.Router;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code /api/v1/archives}: a sandbox's workspace archives, listed and downloaded, also after the
 * sandbox is gone. Owner-scoped by the owner in each archive's manifest; others get 404.
 */
final class ArchiveRoutes {
  private final WorkspaceArchives archives;
  private final Authenticator auth;

  ArchiveRoutes(WorkspaceArchives archives, Authenticator auth) {
    this.archives = archives;
    this.auth = auth;
  }

  void register(Router router) {
    router
        .add("GET", "/api/v1/archives/{id}", Failures.mapped(this::list))
        .add("GET", "/api/v1/archives/{id}/{group}/{file}", Failures.mapped(this::download));
  }

  private void list(Call call) throws IOException {
    var caller = auth.require(call).caller();
    String id = call.pathParam("id");
    List<ArchiveInfo> found = archives.list(caller, id);
    if (found.isEmpty()) {
      throw HttpError.notFound("no archives of sandbox " + id);
    }
    call.sendJson(200, Map.of("items", found.stream().map(ArchiveRoutes::view).toList()));
  }

  private void download(Call call) throws IOException {
    var caller = auth.require(call).caller();
    String id = call.pathParam("id");
    String name = call.pathParam("group") + "/" + call.pathParam("file");
    InputStream in =
        archives
            .open(caller, id, name)
            .orElseThrow(() -> HttpError.notFound("no archive " + name + " of sandbox " + id));
    try (in;
        OutputStream out = call.stream(200, "application/octet-stream", 0)) {
      in.transferTo(out);
    }
  }

  private static Map<String, Object> view(ArchiveInfo info) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("name", info.name());
    view.put("format", info.format());
    view.put("byte_count", info.byteCount());
    view.put("sha256", info.sha256());
    view.put("created_at", Views.time(info.createdAt()));
    return view;
  }
}
