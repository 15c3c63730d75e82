package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.http.Json;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A control plane with room for one sandbox: the second start is a 429 naming the limit. */
class CapacityApiTest {
  @RegisterExtension final ControlPlane plane = new ControlPlane(b -> b.maxSandboxes(1));

  @Test
  void pastCapacityStartIsA429ThatNamesTheLimit() throws Exception {
    assertThat(plane.admin("POST", "/api/v1/sandboxes?wait=true", null).statusCode())
        .isEqualTo(200);
    var second = plane.admin("POST", "/api/v1/sandboxes", null);
    assertThat(second.statusCode()).isEqualTo(429);
    @SuppressWarnings("unchecked")
    Map<String, Object> body =
        (Map<String, Object>) Json.parseAny(second.body().getBytes(StandardCharsets.UTF_8));
    assertThat((String) body.get("detail")).contains("at capacity").contains("max 1");
  }
}
