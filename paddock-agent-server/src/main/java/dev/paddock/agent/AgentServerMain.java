package dev.paddock.agent;

import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.core.KeyRing;
import dev.paddock.agent.user.CommandUserException;
import dev.paddock.agent.user.RunAs;
import dev.paddock.backend.kit.protocol.AgentSecrets;
import dev.paddock.backend.kit.protocol.ReadyLine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * {@code paddock agent}: runs the agent-server until SIGTERM/SIGINT.
 *
 * <pre>
 * paddock agent [--port N] [--host H] [--workspace DIR] [--events-dir DIR] [--file-root DIR]...
 *               [--timeout SECONDS] [--secrets-stdin | --secrets-file FILE] [--ready-file FILE]
 *               [--no-fork-server]
 *               [--run-as UID:GID] [--home DIR] [--sandbox-id ID] [--plugin-path DIR]
 * </pre>
 *
 * {@code --host} defaults to {@code 127.0.0.1}, keys or not: an agent that must answer other
 * machines (a container's published port) says {@code --host 0.0.0.0}. The start line names the
 * address. {@code --workspace} is created when missing. {@code --sandbox-id} (default: {@code
 * PADDOCK_SANDBOX_ID} from the environment, which the backends set) reaches commands as {@code
 * SANDBOX_ID}, beside {@code PADDOCK_AGENT_URL}, the agent's own URL.
 *
 * <p>{@code --run-as} runs every command, session shell and git process as that user and group (no
 * supplementary groups, no capabilities) through {@code setpriv}, and gives the files the agent
 * writes for them to that user; it needs the agent to run as root (naming the agent's own ids is
 * accepted and changes nothing). {@code --home} is their {@code HOME} (default: the workspace when
 * switching user, else the agent's). A switch that cannot be made exits with code 2.
 *
 * <p>Keys come from {@code OH_SESSION_API_KEYS_0..n} or {@code SESSION_API_KEY} (OpenHands' names),
 * the admin secret from {@code PADDOCK_AGENT_ADMIN_KEY}. With {@code --secrets-stdin} they are read
 * from standard input instead ({@code session_api_key=}, {@code session_api_key_sha256=}, {@code
 * admin_key=}, {@code admin_key_sha256=} lines, see {@link AgentSecrets}), so they never appear in
 * this process's environment; the {@code ./paddock} launcher does that for you. {@code
 * --secrets-file FILE} reads the same lines from a file a backend mounted (a Kubernetes Secret, a
 * file written before the agent starts): read once at start, then deleted, or left in place when it
 * cannot be deleted because it is on a read-only mount. Either way, an empty secrets input is an
 * error (exit 2): the agent never serves an open API because its keys went missing.
 */
public final class AgentServerMain {
  private AgentServerMain() {}

  public static void main(String[] args) throws Exception {
    AgentConfig.Builder builder = AgentConfig.builder();
    boolean secretsFromStdin = false;
    Path secretsFile = null;
    Path readyFile = null;
    List<Path> roots = new ArrayList<>();
    // The backends put the id in the agent's environment; an option says it explicitly.
    String sandboxId = System.getenv().getOrDefault("PADDOCK_SANDBOX_ID", "");
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--port" -> builder.port(Integer.parseInt(value(args, ++i, arg)));
        case "--host" -> builder.host(value(args, ++i, arg));
        case "--workspace" -> builder.workspace(Path.of(value(args, ++i, arg)));
        case "--events-dir" -> builder.eventsDir(Path.of(value(args, ++i, arg)));
        case "--file-root" -> roots.add(Path.of(value(args, ++i, arg)));
        case "--timeout" ->
            builder.defaultTimeout(Duration.ofSeconds(Long.parseLong(value(args, ++i, arg))));
        case "--secrets-stdin" -> secretsFromStdin = true;
        case "--secrets-file" -> secretsFile = Path.of(value(args, ++i, arg));
        case "--ready-file" -> readyFile = Path.of(value(args, ++i, arg));
        case "--no-fork-server" -> builder.forkServer(false);
        case "--run-as" -> builder.runAs(runAs(value(args, ++i, arg)));
        case "--home" -> builder.home(Path.of(value(args, ++i, arg)));
        case "--sandbox-id" -> sandboxId = value(args, ++i, arg);
        case "--plugin-path" -> builder.pluginPath(Path.of(value(args, ++i, arg)));
        case "-h", "--help" -> {
          System.out.println(
              "usage: paddock agent [--port N] [--host H] [--workspace DIR] [--events-dir DIR]"
                  + " [--file-root DIR]... [--timeout SECONDS] [--secrets-stdin | --secrets-file"
                  + " FILE]"
                  + " [--ready-file FILE] [--no-fork-server] [--run-as UID:GID] [--home DIR]"
                  + " [--sandbox-id ID] [--plugin-path DIR]");
          return;
        }
        default -> {
          System.err.println("paddock agent: unknown option " + arg + " (try --help)");
          System.exit(2);
        }
      }
    }
    if (!roots.isEmpty()) {
      builder.fileRoots(roots);
    }
    builder.sandboxId(sandboxId);
    if (secretsFromStdin && secretsFile != null) {
      exit("give --secrets-stdin or --secrets-file, not both");
    }
    Secrets secrets =
        secretsFromStdin
            ? Secrets.of(readSecrets("standard input", System.in))
            : secretsFile != null
                ? Secrets.of(SecretsFile.consume(secretsFile))
                : Secrets.fromEnvironment(System.getenv());
    builder.sessionKeys(secrets.sessionKeys()).adminKeys(secrets.adminKeys());
    InheritedSignals.restoreForCommands();
    AgentServer server;
    try {
      server = AgentServer.start(builder.build());
    } catch (CommandUserException | dev.paddock.agent.plugin.PluginException e) {
      System.err.println("paddock agent: " + e.getMessage());
      System.exit(2);
      return;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.close();
                  stopped.countDown();
                }));
    if (readyFile != null) {
      writeReadyFile(readyFile, server.port());
    }
    System.out.println(
        new ReadyLine(server.config().host(), server.port())
            .format(
                "workspace "
                    + server.config().workspace()
                    + (isLoopback(server.config().host())
                        ? "; loopback only, --host 0.0.0.0 to accept other machines"
                        : "")));
    System.out.flush();
    stopped.await();
  }

  private static AgentSecrets readSecrets(String from, InputStream in) throws IOException {
    try {
      return AgentSecrets.read(in);
    } catch (IllegalArgumentException e) {
      exit(e.getMessage() + " on " + from);
      throw e;
    }
  }

  /** Prints {@code paddock agent: <message>} and exits with code 2 (bad invocation). */
  static void exit(String message) {
    System.err.println("paddock agent: " + message);
    System.exit(2);
  }

  private static boolean isLoopback(String host) {
    return host.startsWith("127.") || host.equals("::1") || host.equals("localhost");
  }

  /** Writes the port atomically, so a supervisor that lost our stdout can still find us. */
  private static void writeReadyFile(Path file, int port) throws IOException {
    Path temp = file.resolveSibling(file.getFileName() + ".tmp");
    java.nio.file.Files.writeString(temp, port + "\n");
    java.nio.file.Files.move(
        temp,
        file,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  private static RunAs runAs(String text) {
    try {
      return RunAs.parse(text);
    } catch (IllegalArgumentException e) {
      System.err.println("paddock agent: " + e.getMessage());
      System.exit(2);
      throw e;
    }
  }

  private static String value(String[] args, int i, String option) {
    if (i >= args.length) {
      System.err.println("paddock agent: " + option + " needs a value");
      System.exit(2);
    }
    return args[i];
  }

  /** Keys and admin secret as digests, from the environment or standard input. */
  record Secrets(KeyRing sessionKeys, KeyRing adminKeys) {
    static Secrets fromEnvironment(Map<String, String> env) {
      List<String> keys = new ArrayList<>();
      for (int i = 0; env.containsKey("OH_SESSION_API_KEYS_" + i); i++) {
        keys.add(env.get("OH_SESSION_API_KEYS_" + i));
      }
      if (keys.isEmpty() && env.containsKey("SESSION_API_KEY")) {
        keys.add(env.get("SESSION_API_KEY"));
      }
      keys.removeIf(String::isEmpty);
      List<String> admin = new ArrayList<>();
      if (env.containsKey("PADDOCK_AGENT_ADMIN_KEY")) {
        admin.add(env.get("PADDOCK_AGENT_ADMIN_KEY"));
      }
      admin.removeIf(String::isEmpty);
      return new Secrets(KeyRing.ofKeys(keys), KeyRing.ofKeys(admin));
    }

    static Secrets of(AgentSecrets secrets) {
      if (secrets.isEmpty()) {
        // Whoever started us meant to give keys and died first (or sent none): never serve an
        // open API in that case.
        exit("secrets were to be given but none arrived");
      }
      return new Secrets(
          KeyRing.ofDigests(secrets.sessionKeyDigests()),
          KeyRing.ofDigests(secrets.adminKeyDigests()));
    }
  }
}
