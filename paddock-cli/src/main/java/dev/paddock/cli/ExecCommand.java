package dev.paddock.cli;

import dev.paddock.api.SandboxInfo;
import dev.paddock.client.AgentClient;
import dev.paddock.client.PaddockClient;
import dev.paddock.client.PaddockClientException;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code paddock exec [-i] <id> -- <cmd...>}: streams output (and with {@code -i} input), exits
 * with the command's exit code (124 when it timed out).
 */
@Command(
    mixinStandardHelpOptions = true,
    name = "exec",
    description = "Run a command in a sandbox, streaming its output.")
final class ExecCommand implements Callable<Integer> {
  @Mixin Connection connection;

  @Option(names = "--timeout", description = "seconds before the command is killed (default 300)")
  int timeout = 300;

  @Option(
      names = {"-i", "--interactive"},
      description = "forward this terminal's standard input to the command (its end closes it)")
  boolean interactive;

  @Parameters(index = "0", paramLabel = "ID")
  String id;

  @Parameters(index = "1..*", paramLabel = "COMMAND", description = "the command (after --)")
  List<String> command;

  @Override
  public Integer call() {
    if (command == null || command.isEmpty()) {
      throw new IllegalArgumentException("no command: paddock exec <id> -- <command...>");
    }
    PaddockClient client = connection.client();
    SandboxInfo sandbox =
        client.get(id).orElseThrow(() -> new PaddockClientException(404, "no sandbox " + id));
    String text =
        command.size() == 1
            ? command.get(0)
            : command.stream().map(ExecCommand::quote).collect(Collectors.joining(" "));
    Consumer<String> out =
        chunk -> {
          System.out.print(chunk);
          System.out.flush();
        };
    Consumer<String> err =
        chunk -> {
          System.err.print(chunk);
          System.err.flush();
        };
    AgentClient agent = client.agent(sandbox);
    int exit =
        interactive
            ? agent.exec(text, timeout, System.in, out, err)
            : agent.exec(text, timeout, out, err);
    return exit < 0 ? 124 : exit;
  }

  /** Quotes one argument for bash, so {@code exec id -- echo "a b"} keeps "a b" one word. */
  static String quote(String arg) {
    if (arg.matches("[A-Za-z0-9_./=:,@%+-]+")) {
      return arg;
    }
    return "'" + arg.replace("'", "'\\''") + "'";
  }
}
