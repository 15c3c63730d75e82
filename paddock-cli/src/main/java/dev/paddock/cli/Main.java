package dev.paddock.cli;

import java.util.Map;
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
      SandboxCommands.class,
      SpecCommands.class,
      ExecCommand.class,
      CpCommand.class,
      UserCommands.class,
      ArchiveCommands.class,
    })
public final class Main implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    Carriers.widen(); // before anything starts a virtual thread
    System.exit(run(args));
  }

  /** Runs the command line; returns the exit code. */
  public static int run(String... args) {
    return commandLine(System.getenv()).execute(args);
  }

  /**
   * The command line, with {@code server} and {@code config} reading settings from {@code
   * environment} (the process's own in {@link #run}; a test's map in tests).
   */
  static CommandLine commandLine(Map<String, String> environment) {
    CommandLine line = new CommandLine(new Main());
    SettingsCatalog catalog = SettingsCatalog.discover();
    ServerCommand server = new ServerCommand(environment, catalog);
    CommandLine serverLine = new CommandLine(server);
    server.install(serverLine);
    ConfigCommand config = new ConfigCommand(environment, catalog);
    CommandLine configLine = new CommandLine(config);
    config.install(configLine);
    DoctorCommand doctor = new DoctorCommand(environment, catalog);
    CommandLine doctorLine = new CommandLine(doctor);
    doctor.install(doctorLine);
    line.addSubcommand("doctor", doctorLine);
    line.addSubcommand("server", serverLine);
    line.addSubcommand("config", configLine);
    RuntimeApiCommand runtimeApi = new RuntimeApiCommand(environment, catalog);
    CommandLine runtimeApiLine = new CommandLine(runtimeApi);
    runtimeApi.install(runtimeApiLine);
    line.addSubcommand("runtime-api", runtimeApiLine);
    line.addSubcommand("runtime-bundle", new RuntimeBundleCommand(environment));
    line.setExecutionExceptionHandler(
        (e, cmd, parsed) -> {
          cmd.getErr().println("paddock: " + e.getMessage());
          return e instanceof dev.paddock.client.PaddockClientException ? 1 : 2;
        });
    return line;
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }
}
