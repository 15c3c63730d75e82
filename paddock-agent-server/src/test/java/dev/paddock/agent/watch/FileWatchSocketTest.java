package dev.paddock.agent.watch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.agent.AgentServer;
import dev.paddock.http.Json;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code GET /api/file/watch/ws}: the same changes as JSON text frames. */
class FileWatchSocketTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  @Test
  void changesArriveAsTextFrames() throws Exception {
    BlockingQueue<Map<String, Object>> frames = new LinkedBlockingQueue<>();
    URI uri =
        URI.create(
            "ws://127.0.0.1:"
                + agent.server().port()
                + "/api/file/watch/ws?path="
                + URLEncoder.encode(agent.workspace().toString(), StandardCharsets.UTF_8));
    WebSocket socket =
        agent
            .client()
            .newWebSocketBuilder()
            .header(AgentServer.SESSION_KEY_HEADER, AgentFixture.KEY)
            .buildAsync(
                uri,
                new WebSocket.Listener() {
                  @Override
                  public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
                    frames.add(Json.parseObject(data.toString().getBytes(StandardCharsets.UTF_8)));
                    ws.request(1);
                    return null;
                  }
                })
            .get(10, TimeUnit.SECONDS);
    try {
      assertThat(frames.poll(10, TimeUnit.SECONDS)).containsEntry("type", "ready");
      Path file = Files.writeString(agent.workspace().resolve("seen.txt"), "x");

      assertThat(frames.poll(10, TimeUnit.SECONDS))
          .containsEntry("type", "created")
          .containsEntry("path", "seen.txt");
      Files.delete(file);
      assertThat(frames.poll(10, TimeUnit.SECONDS)).containsEntry("type", "deleted");
    } finally {
      socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").get(5, TimeUnit.SECONDS);
    }
  }
}
