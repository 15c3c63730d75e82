package dev.paddock.cli;

import dev.paddock.api.spi.HostCheck;
import java.io.IOException;
import java.io.InputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * {@code paddock doctor}'s checks of the host itself, whatever the backend: cgroups, user
 * namespaces, memory, disk under the data dir, the server port, the clock and the database. Each
 * reads the real system ({@code /proc}, {@code /sys/fs/cgroup}, a bind, a JDBC connection) and
 * never throws: a problem is a FAIL or WARN with a fix.
 */
final class HostChecks {
  private static final long MEMORY_FAIL = 256L << 20;
  private static final long MEMORY_WARN = 1L << 30;
  private static final Duration CLOCK_WARN = Duration.ofSeconds(30);
  private static final List<String> V1_CONTROLLERS = List.of("memory", "cpu", "pids", "freezer");
  private static final List<String> V2_CONTROLLERS = List.of("memory", "cpu", "pids");

  private final Path root;

  /** {@code root}: where {@code proc} and {@code sys} are ({@code /} on a real host). */
  HostChecks(Path root) {
    this.root = root;
  }

  /** Cgroup v1 or v2 and whether the controllers limits and pause need are usable. */
  HostCheck cgroups() {
    String name = "cgroups";
    Path cgroup = root.resolve("sys/fs/cgroup");
    Path v2 = cgroup.resolve("cgroup.controllers");
    if (Files.isRegularFile(v2)) {
      List<String> present = words(v2);
      Optional<Path> own = ownV2Cgroup().map(p -> cgroup.resolve(p.substring(1)));
      boolean writable = own.map(Files::isWritable).orElse(false);
      List<String> missing = V2_CONTROLLERS.stream().filter(c -> !present.contains(c)).toList();
      String detail =
          "v2, controllers "
              + present
              + (writable ? "" : "; our cgroup is not writable (no delegation)");
      if (!missing.isEmpty() || !writable) {
        return HostCheck.warn(
            name,
            detail + (missing.isEmpty() ? "" : "; missing " + missing),
            "the process backend then runs sandboxes without those limits: run it as root or"
                + " with a delegated cgroup (systemd-run --user -p Delegate=yes)");
      }
      return HostCheck.ok(name, detail);
    }
    if (!Files.isDirectory(cgroup)) {
      return HostCheck.warn(
          name, cgroup + " is not mounted", "mount cgroup2 on /sys/fs/cgroup (limits need it)");
    }
    List<String> missing =
        V1_CONTROLLERS.stream().filter(c -> !Files.isDirectory(cgroup.resolve(c))).toList();
    List<String> unwritable =
        V1_CONTROLLERS.stream()
            .filter(c -> Files.isDirectory(cgroup.resolve(c)))
            .filter(c -> !Files.isWritable(cgroup.resolve(c)))
            .toList();
    String detail =
        "v1, controllers " + V1_CONTROLLERS.stream().filter(c -> !missing.contains(c)).toList();
    if (!missing.isEmpty() || !unwritable.isEmpty()) {
      return HostCheck.warn(
          name,
          detail
              + (missing.isEmpty() ? "" : "; not mounted " + missing)
              + (unwritable.isEmpty() ? "" : "; not writable " + unwritable),
          "the process backend then runs sandboxes without those limits; mount them (or boot"
              + " with cgroup v2) and run the server as root");
    }
    return HostCheck.ok(name, detail + ", all writable");
  }

  /** Rootless engines and gVisor need user namespaces; rootful Docker and process do not. */
  HostCheck userNamespaces() {
    String name = "user namespaces";
    Optional<Long> max = number(root.resolve("proc/sys/user/max_user_namespaces"));
    Optional<Long> unprivileged = number(root.resolve("proc/sys/kernel/unprivileged_userns_clone"));
    if (max.isEmpty()) {
      return HostCheck.warn(
          name, "this kernel reports no user namespace limit", "a kernel with CONFIG_USER_NS");
    }
    if (max.get() == 0) {
      return HostCheck.warn(
          name,
          "disabled (user.max_user_namespaces = 0)",
          "sysctl -w user.max_user_namespaces=15000 (rootless Docker and gVisor need them)");
    }
    if (unprivileged.isPresent() && unprivileged.get() == 0) {
      return HostCheck.warn(
          name,
          "root only (kernel.unprivileged_userns_clone = 0)",
          "sysctl -w kernel.unprivileged_userns_clone=1 for rootless engines");
    }
    return HostCheck.ok(name, "enabled (up to " + max.get() + ")");
  }

  /** MemAvailable from /proc/meminfo: each sandbox needs its agent's JVM plus its commands. */
  HostCheck freeMemory() {
    String name = "free memory";
    Path meminfo = root.resolve("proc/meminfo");
    try {
      for (String line : Files.readAllLines(meminfo)) {
        if (line.startsWith("MemAvailable:")) {
          long bytes = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
          String detail = HostCheck.bytes(bytes) + " available";
          String fix = "stop other work or add memory; each sandbox needs about 100 MiB idle";
          if (bytes < MEMORY_FAIL) {
            return HostCheck.fail(name, detail, fix);
          }
          return bytes < MEMORY_WARN
              ? HostCheck.warn(name, detail, fix)
              : HostCheck.ok(name, detail);
        }
      }
      return HostCheck.skipped(name, meminfo + " has no MemAvailable");
    } catch (IOException | NumberFormatException e) {
      return HostCheck.skipped(name, "cannot read " + meminfo + ": " + e.getMessage());
    }
  }

  static HostCheck dataDirDisk(Path dataDir) {
    HostCheck disk = HostCheck.freeDisk("free disk (data dir)", dataDir);
    if (Files.exists(dataDir) && !Files.isWritable(dataDir)) {
      return HostCheck.fail(disk.name(), dataDir + " is not writable", "chown it to this user");
    }
    return disk;
  }

  /** The port {@code paddock server} would bind: free, or held by a Paddock already (a warning). */
  static HostCheck serverPort(String host, int port) {
    String name = "server port";
    if (port == 0) {
      return HostCheck.ok(name, "PADDOCK_PORT=0: any free port");
    }
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(InetAddress.getByName(host), port));
      return HostCheck.ok(name, host + ":" + port + " is free");
    } catch (BindException e) {
      if (paddockAnswers(host, port)) {
        return HostCheck.warn(
            name,
            host + ":" + port + " is held by a running Paddock server",
            "fine if it is yours; else stop it or choose another PADDOCK_PORT");
      }
      return HostCheck.fail(
          name,
          host + ":" + port + " is taken by another program",
          "stop it (ss -ltnp 'sport = :" + port + "' names it) or set PADDOCK_PORT");
    } catch (IOException e) {
      return HostCheck.fail(
          name,
          "cannot bind " + host + ":" + port + ": " + e.getMessage(),
          "set PADDOCK_HOST to an address of this host");
    }
  }

  private static boolean paddockAnswers(String host, int port) {
    try (HttpClient client =
        HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build()) {
      HttpRequest request =
          HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + "/openapi.json"))
              .timeout(Duration.ofSeconds(2))
              .build();
      HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
      return response.statusCode() == 200 && response.body().contains("Paddock");
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * The wall clock must not run behind this build (a clock reset to 1970 breaks lifetimes, key
   * expiry and archive dates).
   */
  static HostCheck clock(Instant now, Optional<Instant> built) {
    String name = "clock";
    if (built.isPresent() && now.isBefore(built.get().minus(Duration.ofDays(1)))) {
      return HostCheck.fail(
          name,
          "the clock says " + now + ", before this build (" + built.get() + ")",
          "set the time (timedatectl set-ntp true, or date -s)");
    }
    return HostCheck.ok(name, now + (built.isPresent() ? ", after this build" : ""));
  }

  /** When the running jar was built (its file's time), if it runs from a jar. */
  static Optional<Instant> buildTime() {
    java.security.CodeSource source = HostChecks.class.getProtectionDomain().getCodeSource();
    if (source == null) {
      return Optional.empty();
    }
    try {
      Path jar = Path.of(source.getLocation().toURI());
      return Optional.of(Files.getLastModifiedTime(jar).toInstant());
    } catch (java.net.URISyntaxException | IOException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** Connects as the server would and reads the database's clock (skew breaks lifetimes). */
  static HostCheck database(String url, String user, String password) {
    String name = "database";
    String shown = url.replaceAll("(?i)password=[^&;]*", "password=***");
    DriverManager.setLoginTimeout(5);
    try (Connection connection = DriverManager.getConnection(url, user, password);
        Statement statement = connection.createStatement();
        ResultSet now = statement.executeQuery("SELECT CURRENT_TIMESTAMP")) {
      now.next();
      String product = connection.getMetaData().getDatabaseProductName();
      String detail = product + " answers at " + shown;
      if (!url.startsWith("jdbc:sqlite:")) {
        Duration skew = Duration.between(now.getTimestamp(1).toInstant(), Instant.now()).abs();
        detail += "; its clock is " + skew.toMillis() + " ms from ours";
        if (skew.compareTo(CLOCK_WARN) > 0) {
          return HostCheck.warn(name, detail, "synchronise the clocks (chrony, systemd-timesyncd)");
        }
      }
      return HostCheck.ok(name, detail);
    } catch (SQLException e) {
      return HostCheck.fail(
          name,
          "cannot connect to " + shown + ": " + e.getMessage(),
          "start the database, or correct PADDOCK_DATABASE_URL / _USER / _PASSWORD");
    }
  }

  private Optional<String> ownV2Cgroup() {
    try {
      for (String line : Files.readAllLines(root.resolve("proc/self/cgroup"))) {
        if (line.startsWith("0::")) {
          return Optional.of(line.substring(3));
        }
      }
    } catch (IOException e) {
      return Optional.empty();
    }
    return Optional.empty();
  }

  private static List<String> words(Path file) {
    try {
      return List.of(Files.readString(file).trim().split("\\s+"));
    } catch (IOException e) {
      return List.of();
    }
  }

  private static Optional<Long> number(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      return Optional.of(Long.parseLong(new String(in.readAllBytes()).trim()));
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }
}
