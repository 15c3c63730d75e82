package dev.paddock.agent.git;

import com.sun.net.httpserver.HttpServer;
import dev.paddock.agent.files.Excludes;
import dev.paddock.agent.http.Router;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A loopback HTTP server exposing {@link GitArchive} the way the archive route does ({@code GET
 * /archive?path=&base_ref=&exclude=&use_default_excludes=}), so the git-delta format is tested over
 * a real socket independently of the file routes.
 */
final class DeltaServer implements AutoCloseable {
  private final HttpServer http;
  private final ExecutorService handlers = Executors.newVirtualThreadPerTaskExecutor();
  private final HttpClient client = HttpClient.newHttpClient();

  DeltaServer() throws IOException {
    http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    Router router = new Router(1 << 20, List.of(), exchange -> true, () -> {});
    router.add(
        "GET",
        "/archive",
        call -> {
          List<String> excludes = new ArrayList<>();
          if (call.queryBoolean("use_default_excludes").orElse(true)) {
            excludes.addAll(Excludes.DEFAULTS);
          }
          excludes.addAll(call.queryAll("exclude"));
          Path dir = Path.of(call.requiredQuery("path"));
          GitArchive.respondDelta(call, dir, call.query("base_ref"), excludes);
        });
    http.createContext("/", router);
    http.setExecutor(handlers);
    http.start();
  }

  /** GET /archive for {@code dir} with extra query parameters ("name=value", unencoded value). */
  HttpResponse<byte[]> archive(Path dir, String... params)
      throws IOException, InterruptedException {
    StringBuilder query = new StringBuilder("path=").append(encode(dir.toString()));
    for (String param : params) {
      int eq = param.indexOf('=');
      query.append('&').append(param, 0, eq + 1).append(encode(param.substring(eq + 1)));
    }
    URI uri = URI.create("http://127.0.0.1:" + http.getAddress().getPort() + "/archive?" + query);
    HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(60)).build();
    return client.send(request, HttpResponse.BodyHandlers.ofByteArray());
  }

  static Optional<String> header(HttpResponse<?> response, String name) {
    return response.headers().firstValue(name);
  }

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    http.stop(0);
    handlers.shutdownNow();
    client.close();
  }
}
