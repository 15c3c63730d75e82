package dev.paddock.agent.bash;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;

/** Shared JSON fields for results (Paddock additions beside the OpenHands fields). */
final class BashEvents {
  private BashEvents() {}

  static void writeOutcomeFields(JsonGenerator g, CommandResult outcome) throws IOException {
    g.writeBooleanField("timed_out", outcome.timedOut());
    g.writeBooleanField("oom_killed", outcome.oomKilled());
    g.writeBooleanField("stdout_truncated", outcome.stdoutTruncated());
    g.writeBooleanField("stderr_truncated", outcome.stderrTruncated());
    if (outcome.error().isPresent()) {
      g.writeStringField("error", outcome.error().get());
    }
    if (outcome.sessionReset()) {
      g.writeBooleanField("session_reset", true);
    }
    g.writeNumberField("duration_ms", outcome.durationMillis());
  }
}
