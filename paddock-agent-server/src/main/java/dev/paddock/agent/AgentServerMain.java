package dev.paddock.agent;

import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.core.KeyRing;
import dev.paddock.agent.user.CommandUserException;
import dev.paddock.agent.user.RunAs;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
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
 *               [--timeout SECONDS] [--secrets-stdin] [--ready-file FILE] [--no-fork-server]
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
 * admin_key=}, {@code admin_key_sha256=} lines), so they never appear in this process's
 * environment; the {@code ./paddock} launcher does that for you.
 */
public final class AgentServerMain {
  private AgentServerMain() {}

  public static void main(String[] args) throws Exception {
    AgentConfig.Builder builder = AgentConfig.builder();
    boolean secretsFromStdin = false;
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
        case "--ready-file" -> readyFile = Path.of(value(args, ++i, arg));
        case "--no-fork-server" -> builder.forkServer(false);
        case "--run-as" -> builder.runAs(runAs(value(args, ++i, arg)));
        case "--home" -> builder.home(Path.of(value(args, ++i, arg)));
        case "--sandbox-id" -> sandboxId = value(args, ++i, arg);
        case "--plugin-path" -> builder.pluginPath(Path.of(value(args, ++i, arg)));
        case "-h", "--help" -> {
          System.out.println(
              "usage: paddock agent [--port N] [--host H] [--workspace DIR] [--events-dir DIR]"
                  + " [--file-root DIR]... [--timeout SECONDS] [--secrets-stdin]"
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
    Secrets secrets =
        secretsFromStdin ? Secrets.read(System.in) : Secrets.fromEnvironment(System.getenv());
    if (secretsFromStdin && secrets.sessionKeys().isEmpty() && secrets.adminKeys().isEmpty()) {
      // Whoever started us meant to give keys and died first (or sent none): never serve an open
      // API in that case.
      System.err.println(
          "paddock agent: --secrets-stdin given but no key arrived on standard input");
      System.exit(2);
    }
    builder.sessionKeys(secrets.sessionKeys()).adminKeys(secrets.adminKeys());
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
        "paddock agent-server listening on http://"
            + server.config().host()
            + ":"
            + server.port()
            + " (workspace "
            + server.config().workspace()
            + (isLoopback(server.config().host())
                ? "; loopback only, --host 0.0.0.0 to accept other machines"
                : "")
            + ")");
    System.out.flush();
    stopped.await();
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

    static Secrets read(java.io.InputStream in) throws IOException {
      List<String> keyDigests = new ArrayList<>();
      List<String> adminDigests = new ArrayList<>();
      BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      String line;
      while ((line = reader.readLine()) != null) {
        int eq = line.indexOf('=');
        if (line.isBlank() || eq < 0) {
          continue;
        }
        String name = line.substring(0, eq).trim();
        String value = line.substring(eq + 1).trim();
        if (value.isEmpty()) {
          continue;
        }
        switch (name) {
          case "session_api_key" -> keyDigests.add(KeyRing.sha256Hex(value));
          case "session_api_key_sha256" -> keyDigests.add(value);
          case "admin_key" -> adminDigests.add(KeyRing.sha256Hex(value));
          case "admin_key_sha256" -> adminDigests.add(value);
          default ->
              throw new IllegalArgumentException("unknown secret '" + name + "' on standard input");
        }
      }
      return new Secrets(KeyRing.ofDigests(keyDigests), KeyRing.ofDigests(adminDigests));
    }
  }
}
