package dev.paddock.agent.bash;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.user.CommandUser;
import dev.paddock.http.Json;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link BashService} driven directly, for what the HTTP API cannot show. */
class BashServiceTest {
  private static final int MAX_EVENTS = 5;

  @TempDir Path root;

  private BashService service() {
    return new BashService(
        AgentConfig.builder()
            .port(0)
            .workspace(root)
            .eventsDir(root.resolve("events"))
            .maxEvents(MAX_EVENTS)
            .killGrace(Duration.ofMillis(500))
            .build(),
        CommandUser.agentItself());
  }

  private static CommandRequest oneShot(String command, Map<String, String> env) {
    return new CommandRequest(command, Optional.empty(), 10, Optional.empty(), false, env);
  }

  /**
   * The history stays within its count bound while output is produced, not only when someone
   * searches it: memory must not grow with a long, chatty command that nobody polls.
   */
  @Test
  void eventCountNeverExceedsTheBoundWhileAChattyCommandRuns() throws Exception {
    try (BashService service = service()) {
      CommandRecord record =
          service.start(
              oneShot("for i in $(seq 1 25); do echo $i; sleep 0.04; done", Map.of()),
              Optional.empty());
      int most = 0;
      while (record.running()) {
        most = Math.max(most, service.eventCount());
        Thread.sleep(5);
      }
      most = Math.max(most, service.eventCount());
      assertThat(record.events()).as("the command was cut into many events").isNotEmpty();
      assertThat(most).as("most events held at any time").isLessThanOrEqualTo(MAX_EVENTS);
    }
  }

  @Test
  void anEnvironmentTheOsRefusesEndsTheCommandInsteadOfStrandingIt() throws Exception {
    try (BashService service = service()) {
      CommandRecord record = service.start(oneShot("true", Map.of("A=B", "1")), Optional.empty());
      CommandResult result = record.result.get(5, TimeUnit.SECONDS);
      assertThat(result.exitCode()).isEqualTo(-1);
      assertThat(result.error()).hasValueSatisfying(e -> assertThat(e).contains("could not start"));
      assertThat(service.running()).isEmpty();
    }
  }

  @Test
  void anEventWhoseSpoolWasReleasedIsStillWrittenAsValidJson() throws Exception {
    try (BashService service = service()) {
      CommandRecord record = service.start(oneShot("echo gone", Map.of()), Optional.empty());
      record.result.get(5, TimeUnit.SECONDS);
      BashEvent output = record.events().get(record.events().size() - 1);
      // As when retention deletes the files between paging and writing.
      record.deleteSpool();
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (JsonGenerator g = Json.generator(bytes)) {
        output.write(g);
      }
      @SuppressWarnings("unchecked")
      Map<String, Object> parsed = (Map<String, Object>) Json.parseAny(bytes.toByteArray());
      assertThat(parsed).containsEntry("stdout", null).containsEntry("exit_code", 0);
    }
  }
}
