package dev.paddock.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.paddock.api.InvalidRequestException;
import dev.paddock.http.HttpServerConfig;
import dev.paddock.http.HttpServers;
import dev.paddock.http.Router;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a route's exception becomes over a real socket: request errors their 400 or 422 with the
 * message; an {@link IllegalArgumentException} that is not a request error (a bug) a logged 500
 * whose reply keeps its message to the log.
 */
class FailuresTest {
  private static final String SECRET = "/srv/paddock/users/alice/secret-path";

  private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
  private final Logger serverLog = Logger.getLogger("paddock.server");
  private final Handler capture =
      new Handler() {
        @Override
        public void publish(LogRecord record) {
          logged.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };
  private final HttpClient client = HttpClient.newHttpClient();
  private HttpServer server;

  @BeforeEach
  void serve() throws Exception {
    serverLog.addHandler(capture);
    Router router =
        Router.builder()
            .build()
            .add(
                "GET",
                "/unknown-spec",
                Failures.mapped(
                    call -> {
                      throw InvalidRequestException.badRequest("unknown sandbox spec 'x'");
                    }))
            .add(
                "GET",
                "/over-maximum",
                Failures.mapped(
                    call -> {
                      throw new InvalidRequestException("resources.cpus 9.0 is over the maximum");
                    }))
            .add(
                "GET",
                "/bug",
                Failures.mapped(
                    call -> {
                      throw new IllegalArgumentException("cannot open " + SECRET);
                    }))
            .add(
                "GET",
                "/number",
                Failures.mapped(call -> call.sendJson(200, Integer.parseInt("not a number"))));
    server =
        HttpServers.create(
            HttpServerConfig.builder(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .build());
    server.createContext("/", router);
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
    client.close();
    serverLog.removeHandler(capture);
  }

  private HttpResponse<String> get(String path) throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
    return client.send(
        HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void requestErrorsAre400Or422WithTheirMessage() throws Exception {
    HttpResponse<String> unknown = get("/unknown-spec");
    HttpResponse<String> over = get("/over-maximum");

    assertThat(unknown.statusCode()).isEqualTo(400);
    assertThat(unknown.body()).contains("unknown sandbox spec 'x'");
    assertThat(over.statusCode()).isEqualTo(422);
    assertThat(over.body()).contains("resources.cpus 9.0 is over the maximum");
    assertThat(logged).isEmpty();
  }

  @Test
  void anUnexpectedIllegalArgumentIsALogged500ThatKeepsItsMessageToTheLog() throws Exception {
    HttpResponse<String> bug = get("/bug");
    HttpResponse<String> number = get("/number");

    assertThat(bug.statusCode()).isEqualTo(500);
    assertThat(bug.body()).contains("internal error (reference: ").doesNotContain(SECRET);
    assertThat(number.statusCode()).as("a NumberFormatException is one too").isEqualTo(500);
    String reference = bug.body().replaceAll("(?s).*reference: ([0-9a-f]+).*", "$1");
    assertThat(logged)
        .anySatisfy(
            record -> {
              assertThat(record.getMessage()).contains("reference " + reference);
              assertThat(record.getThrown()).hasMessageContaining(SECRET);
            });
  }
}
