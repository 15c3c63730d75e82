package dev.paddock.server;

import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.Router;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** {@code /api/v1/sandbox-specs}: search and batch get, as OpenHands. */
final class SpecRoutes {
  private final SandboxSpecService specs;
  private final Authenticator auth;

  SpecRoutes(SandboxSpecService specs, Authenticator auth) {
    this.specs = specs;
    this.auth = auth;
  }

  void register(Router router) {
    router
        .add("GET", "/api/v1/sandbox-specs/search", Failures.mapped(this::search))
        .add("GET", "/api/v1/sandbox-specs", Failures.mapped(this::batchGet));
  }

  private void search(Call call) throws IOException {
    call.allowQuery(Set.of("page_id", "limit"));
    auth.require(call);
    int limit = call.queryInt("limit", 1, PageRequest.MAX_LIMIT).orElse(PageRequest.MAX_LIMIT);
    call.sendJson(
        200, Views.page(specs.search(new PageRequest(call.query("page_id"), limit)), Views::spec));
  }

  private void batchGet(Call call) throws IOException {
    call.allowQuery(Set.of("id"));
    auth.require(call);
    List<String> ids = call.queryAll("id");
    if (ids.size() > 100) {
      throw HttpError.badRequest("at most 100 ids per request, got " + ids.size());
    }
    List<Object> items = new ArrayList<>();
    for (String id : ids) {
      items.add(specs.get(id).map(s -> (Object) Views.spec(s)).orElse(null));
    }
    call.sendJson(200, items);
  }
}
