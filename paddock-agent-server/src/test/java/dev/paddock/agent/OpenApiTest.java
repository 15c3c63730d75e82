package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code GET /openapi.json}: the agent's OpenAPI 3.1 document, checked against its router. */
class OpenApiTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private Map<String, Object> document() throws Exception {
    // No session key, like /alive: the description is public.
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + agent.server().port() + "/openapi.json"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
    return AgentFixture.json(response);
  }

  @Test
  void openApiIsServedWithoutAKeyAsA31Document() throws Exception {
    Map<String, Object> document = document();
    assertThat((String) document.get("openapi")).startsWith("3.1.");
    assertThat(document).containsKeys("info", "paths", "components");
  }

  @Test
  void everyRegisteredRouteIsDescribedAndNothingElse() throws Exception {
    @SuppressWarnings("unchecked")
    Map<String, Map<String, Object>> paths =
        (Map<String, Map<String, Object>>) document().get("paths");
    List<String> routes = agent.server().routes();
    List<String> undescribed = new ArrayList<>();
    for (String route : routes) {
      String[] parts = route.split(" ", 2);
      Map<String, Object> item = paths.get(parts[1]);
      if (item == null || !item.containsKey(parts[0].toLowerCase(Locale.ROOT))) {
        undescribed.add(route);
      }
    }
    assertThat(undescribed).as("routes the document does not describe").isEmpty();
    List<String> stale = new ArrayList<>();
    for (Map.Entry<String, Map<String, Object>> path : paths.entrySet()) {
      for (String method : path.getValue().keySet()) {
        String route = method.toUpperCase(Locale.ROOT) + " " + path.getKey();
        if (!method.equals("parameters") && !routes.contains(route)) {
          stale.add(route);
        }
      }
    }
    assertThat(stale).as("operations described but not served").isEmpty();
  }
}
