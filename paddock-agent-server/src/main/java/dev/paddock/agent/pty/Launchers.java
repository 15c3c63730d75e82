package dev.paddock.agent.pty;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** The programs a terminal is started with, found in the system directories only. */
final class Launchers {
  private static final List<String> SYSTEM_DIRS = List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin");

  private Launchers() {}

  /**
   * {@code sh -c 'exec 0<>"$0" 1>&0 2>&0; exec "$@"' /dev/pts/N argv...}: the child opens the slave
   * itself. The agent must not: a JVM that leads a session without a controlling terminal (PID 1 in
   * a container) would acquire the terminal by opening it without {@code O_NOCTTY}, which {@code
   * ProcessBuilder} redirects do.
   */
  static List<String> opener() {
    return List.of(find("sh"), "-c", "exec 0<>\"$0\" 1>&0 2>&0 && exec \"$@\"");
  }

  static String setsid() {
    return find("setsid");
  }

  static String bash() {
    return find("bash");
  }

  private static String find(String name) {
    return SYSTEM_DIRS.stream()
        .map(dir -> Path.of(dir, name))
        .filter(Files::isExecutable)
        .findFirst()
        .map(Path::toString)
        .orElseThrow(
            () ->
                new TerminalsUnavailableException(
                    "terminals need '" + name + "' in /usr/bin or /bin, and it is missing"));
  }

  /** The effective uid of this JVM ({@code /proc/self} belongs to it). */
  static int agentUid() {
    try {
      return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /** The login shell /etc/passwd gives {@code uid}, when it names an executable real shell. */
  static Optional<String> passwdShell(int uid) {
    try (var lines = Files.lines(Path.of("/etc/passwd"))) {
      return lines
          .map(line -> line.split(":", -1))
          .filter(f -> f.length >= 7 && f[2].equals(Integer.toString(uid)))
          .map(f -> f[6])
          .findFirst()
          .filter(shell -> !shell.endsWith("nologin") && !shell.endsWith("/false"))
          .filter(shell -> Files.isExecutable(Path.of(shell)));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }
}
