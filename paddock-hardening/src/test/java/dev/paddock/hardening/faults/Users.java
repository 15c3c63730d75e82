package dev.paddock.hardening.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.client.PaddockClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** One user of a control plane: its client, and raw REST calls with its key (status and body). */
record Users(String url, String apiKey, PaddockClient client) {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** A new user {@code name}, made with the admin key. */
  static Users create(String url, String adminKey, String name) {
    String key = PaddockClient.connect(URI.create(url), adminKey).createUser(name, false).apiKey();
    return new Users(url, key, PaddockClient.connect(URI.create(url), key));
  }

  /** {@code method path} with this user's key, answered within {@code timeout}. */
  HttpResponse<String> send(String method, String path, Duration timeout)
      throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url + path))
            .timeout(timeout)
            .header("Authorization", "Bearer " + apiKey)
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }

  /** Runs {@code command} in the sandbox with the session key {@code sandbox} carries. */
  String run(SandboxInfo sandbox, String command) {
    StringBuilder out = new StringBuilder();
    StringBuilder err = new StringBuilder();
    int exit = client.agent(sandbox).exec(command, 30, out::append, err::append);
    assertThat(exit).as("%s: %s", command, err).isZero();
    return out.toString();
  }
}
