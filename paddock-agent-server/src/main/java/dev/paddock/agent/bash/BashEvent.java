package dev.paddock.agent.bash;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.UUID;

/**
 * An entry of the bash event history, in the OpenHands wire shape ({@code kind} discriminator,
 * {@code BashCommand} / {@code BashOutput}). Output text is not held in memory: it is read from the
 * command's spool file when the event is written.
 */
sealed interface BashEvent {
  DateTimeFormatter TIMESTAMP =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

  String id();

  String kind();

  Instant timestamp();

  CommandRecord command();

  /** Sequence number in the log; fixes the order of events with equal timestamps. */
  long seq();

  void seq(long seq);

  void write(JsonGenerator g) throws IOException;

  /** The command as asked for. */
  final class Command implements BashEvent {
    private final CommandRecord record;
    private long seq;

    Command(CommandRecord record) {
      this.record = record;
    }

    @Override
    public String id() {
      return record.id;
    }

    @Override
    public String kind() {
      return "BashCommand";
    }

    @Override
    public Instant timestamp() {
      return record.timestamp;
    }

    @Override
    public CommandRecord command() {
      return record;
    }

    @Override
    public long seq() {
      return seq;
    }

    @Override
    public void seq(long seq) {
      this.seq = seq;
    }

    @Override
    public void write(JsonGenerator g) throws IOException {
      g.writeStartObject();
      g.writeStringField("kind", kind());
      g.writeStringField("id", record.id);
      g.writeStringField("timestamp", TIMESTAMP.format(record.timestamp));
      g.writeStringField("command", record.command);
      if (record.cwd.isPresent()) {
        g.writeStringField("cwd", record.cwd.get());
      } else {
        g.writeNullField("cwd");
      }
      g.writeNumberField("timeout", record.timeoutSeconds);
      if (record.session.isPresent()) {
        g.writeStringField("session", record.session.get());
      }
      g.writeEndObject();
    }
  }

  /** A slice of output; the last one of a command carries its exit code. */
  final class Output implements BashEvent {
    private final String id = UUID.randomUUID().toString();
    private final Instant timestamp = Instant.now();
    private final CommandRecord record;
    private final int order;
    private final CommandRecord.Range stdout;
    private final CommandRecord.Range stderr;
    private final Optional<CommandResult> outcome;
    private long seq;

    Output(
        CommandRecord record,
        int order,
        CommandRecord.Range stdout,
        CommandRecord.Range stderr,
        Optional<CommandResult> outcome) {
      this.record = record;
      this.order = order;
      this.stdout = stdout;
      this.stderr = stderr;
      this.outcome = outcome;
    }

    @Override
    public String id() {
      return id;
    }

    @Override
    public String kind() {
      return "BashOutput";
    }

    @Override
    public Instant timestamp() {
      return timestamp;
    }

    @Override
    public CommandRecord command() {
      return record;
    }

    @Override
    public long seq() {
      return seq;
    }

    @Override
    public void seq(long seq) {
      this.seq = seq;
    }

    int order() {
      return order;
    }

    /** Whether this is the command's last event (it carries the exit code). */
    boolean last() {
      return outcome.isPresent();
    }

    @Override
    public void write(JsonGenerator g) throws IOException {
      g.writeStartObject();
      g.writeStringField("kind", kind());
      g.writeStringField("id", id);
      g.writeStringField("timestamp", TIMESTAMP.format(timestamp));
      g.writeStringField("command_id", record.id);
      g.writeNumberField("order", order);
      if (outcome.isPresent()) {
        g.writeNumberField("exit_code", outcome.get().exitCode());
      } else {
        g.writeNullField("exit_code");
      }
      g.writeFieldName("stdout");
      record.writeText(g, Channel.STDOUT, stdout);
      g.writeFieldName("stderr");
      record.writeText(g, Channel.STDERR, stderr);
      if (outcome.isPresent()) {
        BashEvents.writeOutcomeFields(g, outcome.get());
      }
      g.writeEndObject();
    }
  }
}
