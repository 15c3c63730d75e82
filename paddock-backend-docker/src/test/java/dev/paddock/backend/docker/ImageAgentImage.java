package dev.paddock.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.concurrent.TimeUnit;

/**
 * A test image whose own entry point is an agent-server configured only through OpenHands' launch
 * variables, as OpenHands' agent-server images are: the sandbox image plus our agent's runtime
 * bundle baked in at {@code /opt/paddock}, and an entry script that reads nothing but {@code
 * OH_SESSION_API_KEYS_0} (the plaintext key, handed to the agent as a private secrets file, which
 * the agent hashes at once) and {@code AGENT_SERVER} (the port) from its environment. Built with
 * the docker CLI (the legacy builder, so no BuildKit is needed).
 */
final class ImageAgentImage {
  static final String TAG = "paddock/test-image-agent:latest";

  // Binds loopback: the tests use host networking and traffic stays on 127.0.0.1.
  private static final String ENTRYPOINT =
      """
      #!/bin/sh
      set -eu
      : "${OH_SESSION_API_KEYS_0:?OH_SESSION_API_KEYS_0 is not set}"
      port="${AGENT_SERVER:-8000}"
      umask 077
      secrets=$(mktemp)
      printf 'session_api_key=%s\\n' "$OH_SESSION_API_KEYS_0" > "$secrets"
      unset OH_SESSION_API_KEYS_0
      exec /bin/sh /opt/paddock/bin/paddock-sandbox --host 127.0.0.1 --port "$port" \\
        --workspace "$PWD" --secrets-file "$secrets" \\
        --run-as 1000:1000 --home /home/paddock --file-root "$PWD" --file-root /home/paddock
      """;

  private ImageAgentImage() {}

  /** Builds the image (from the sandbox image and the test bundle) and returns its tag. */
  static String build() throws IOException, InterruptedException {
    Path bundle = DockerTestEngine.bundle();
    String script = Base64.getEncoder().encodeToString(ENTRYPOINT.getBytes(StandardCharsets.UTF_8));
    String dockerfile =
        "FROM "
            + DockerTestEngine.IMAGE
            + "\nCOPY . /opt/paddock/\n"
            + "RUN echo "
            + script
            + " | base64 -d > /usr/local/bin/oh-entrypoint && chmod 755 /usr/local/bin/oh-entrypoint"
            + " && mkdir -p /home/paddock && chown 1000:1000 /home/paddock\n"
            + "USER 0:0\n"
            + "ENTRYPOINT [\"/usr/local/bin/oh-entrypoint\"]\n"
            + "CMD []\n";
    Path log = Files.createTempFile("image-agent-build", ".log");
    try {
      ProcessBuilder builder =
          new ProcessBuilder("docker", "build", "-q", "-t", TAG, "-f", "-", bundle.toString())
              .redirectErrorStream(true)
              .redirectOutput(log.toFile());
      builder.environment().put("DOCKER_BUILDKIT", "0");
      builder.environment().put("DOCKER_HOST", DockerTestEngine.dockerHost());
      Process build = builder.start();
      try (OutputStream in = build.getOutputStream()) {
        in.write(dockerfile.getBytes(StandardCharsets.UTF_8));
      }
      boolean done = build.waitFor(5, TimeUnit.MINUTES);
      if (!done) {
        build.destroyForcibly();
      }
      assertThat(done && build.exitValue() == 0)
          .as("docker build of %s: %s", TAG, Files.readString(log))
          .isTrue();
    } finally {
      Files.deleteIfExists(log);
    }
    return TAG;
  }
}
