package dev.paddock.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code paddock}: the command line. {@code paddock agent} is started by the launcher directly from
 * the agent-server jar (it must start fast); everything else is here.
 */
@Command(
    name = "paddock",
    mixinStandardHelpOptions = true,
    version = "paddock 0.1.0",
    description = "Sandboxes for AI agents.",
    subcommands = {
      ServerCommand.class,
      SandboxCommands.class,
      ExecCommand.class,
      CpCommand.class,
      UserCommands.class,
      ArchiveCommands.class,
    })
public final class Main implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs the command line; returns the exit code. */
  public static int run(String... args) {
    CommandLine line = new CommandLine(new Main());
    line.setExecutionExceptionHandler(
        (e, cmd, parsed) -> {
          cmd.getErr().println("paddock: " + e.getMessage());
          return e instanceof dev.paddock.client.PaddockClientException ? 1 : 2;
        });
    return line.execute(args);
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }
}
