package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.backend.process.ProcessBackendProvider;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code paddock doctor} against the real host: each failing check is caused for real (a socket
 * where no engine answers, an image imported for another architecture, a port this test holds).
 */
class DoctorCommandTest {
  private Path dataDir;
  private final StringWriter out = new StringWriter();

  @BeforeEach
  void dataDir() throws IOException {
    dataDir = Files.createTempDirectory("paddock-doctor-test-");
  }

  @AfterEach
  void cleanUp() throws IOException {
    try (Stream<Path> paths = Files.walk(dataDir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private int doctor(String... args) {
    CommandLine line = Main.commandLine(Map.of("PADDOCK_DATA_DIR", dataDir.toString()));
    line.setOut(new PrintWriter(out, true));
    line.setErr(new PrintWriter(new StringWriter(), true));
    String[] all = Stream.concat(Stream.of("doctor"), Stream.of(args)).toArray(String[]::new);
    return line.execute(all);
  }

  /** The report's line for one check, e.g. {@code FAIL server port ...}. */
  private String line(String check) {
    return out.toString()
        .lines()
        .filter(l -> l.matches("^(OK|WARN|FAIL|SKIPPED)\\s+" + check + "\\s.*"))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no '" + check + "' line in:\n" + out));
  }

  @Test
  void aHealthyProcessHostPassesAndAThrowawaySandboxRunsACommand() throws IOException {
    int code =
        doctor(
            "--port=0",
            "--set=agent.command=" + ProcessBackendProvider.classPathAgentCommand(),
            "--set=process.stop-grace=2s");

    assertThat(code).as(out.toString()).isZero();
    assertThat(line("throwaway sandbox")).startsWith("OK").contains("ran a command");
    assertThat(line("database")).startsWith("OK").contains("SQLite");
    assertThat(out.toString()).contains("paddock doctor: healthy");
    try (Stream<Path> sandboxes = Files.list(dataDir.resolve("sandboxes"))) {
      assertThat(sandboxes).as("the throwaway sandbox is removed").isEmpty();
    }
  }

  @Test
  void aPortHeldByAnotherProgramFailsWithAFix() throws IOException {
    try (ServerSocket held = new ServerSocket()) {
      held.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));

      int code = doctor("--port=" + held.getLocalPort(), "--no-sandbox");

      assertThat(code).isEqualTo(1);
      assertThat(line("server port"))
          .startsWith("FAIL")
          .contains("127.0.0.1:" + held.getLocalPort() + " is taken by another program");
      assertThat(out.toString()).contains("fix: stop it").contains("paddock doctor: 1 failed");
    }
  }

  @Test
  void aDockerSocketWhereNoEngineAnswersFailsAndSkipsTheSandbox() throws IOException {
    Path socket = dataDir.resolve("docker.sock");
    // A real socket file whose listener is gone: connecting is refused, as with a stopped dockerd.
    try (ServerSocketChannel gone = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      gone.bind(UnixDomainSocketAddress.of(socket));
    }

    int code = doctor("--runtime=docker", "--port=0", "--set=docker.host=unix://" + socket);

    assertThat(code).isEqualTo(1);
    assertThat(line("docker socket")).startsWith("OK");
    assertThat(line("docker engine")).startsWith("FAIL").contains("no engine answers at unix://");
    assertThat(out.toString()).contains("fix: start it (systemctl start docker");
    assertThat(line("default image")).startsWith("SKIPPED");
    assertThat(line("throwaway sandbox")).startsWith("SKIPPED");
  }

  @Test
  void anImageBuiltForAnotherArchitectureFailsTheImageCheck() throws Exception {
    assumeDocker();
    String image = "paddock-test/foreign-arch:" + UUID.randomUUID().toString().substring(0, 8);
    Path root = Files.createDirectories(dataDir.resolve("rootfs"));
    Files.writeString(root.resolve("README"), "an arm64 image on this amd64 host\n");
    String foreign = hostArch().equals("arm64") ? "amd64" : "arm64";
    Path tar = dataDir.resolve("rootfs.tar");
    docker(List.of("tar", "-C", root.toString(), "-cf", tar.toString(), "."));
    try {
      importForeign(tar, image, foreign);

      int code = doctor("--runtime=docker", "--port=0", "--set=docker.image=" + image);

      assertThat(code).isEqualTo(1);
      assertThat(line("docker engine")).startsWith("OK");
      assertThat(line("default image"))
          .startsWith("FAIL")
          .contains(image + " is built for linux/" + foreign)
          .contains("exec format error");
      assertThat(out.toString()).contains("fix: rebuild it on this host: ./paddock docker-image");
      assertThat(line("throwaway sandbox")).startsWith("SKIPPED");
    } finally {
      new ProcessBuilder("docker", "rmi", "-f", image).start().waitFor(30, TimeUnit.SECONDS);
    }
  }

  /**
   * Imports the tar, then saves it, sets {@code architecture} in its config (Docker 20.10 ignores
   * {@code import --platform} without experimental mode) and loads it back as {@code image}.
   */
  private void importForeign(Path tar, String image, String arch) throws Exception {
    String source = image + "-src";
    Path saved = dataDir.resolve("saved");
    Path archive = dataDir.resolve("saved.tar");
    try {
      docker(List.of("docker", "import", tar.toString(), source));
      docker(List.of("docker", "save", source, "-o", archive.toString()));
      Files.createDirectories(saved);
      docker(List.of("tar", "-C", saved.toString(), "-xf", archive.toString()));
      List<Object> manifest = JSON.std.listFrom(Files.readString(saved.resolve("manifest.json")));
      @SuppressWarnings("unchecked")
      Map<String, Object> entry = new LinkedHashMap<>((Map<String, Object>) manifest.get(0));
      Path configFile = saved.resolve(entry.get("Config").toString());
      Map<String, Object> config =
          new LinkedHashMap<>(JSON.std.mapFrom(Files.readString(configFile)));
      config.put("architecture", arch);
      byte[] rewritten = JSON.std.asBytes(config);
      String digest =
          HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(rewritten));
      Files.delete(configFile);
      Files.write(saved.resolve(digest + ".json"), rewritten);
      entry.put("Config", digest + ".json");
      entry.put("RepoTags", List.of(image));
      Files.writeString(saved.resolve("manifest.json"), JSON.std.asString(List.of(entry)));
      Files.delete(archive);
      docker(List.of("tar", "-C", saved.toString(), "-cf", archive.toString(), "."));
      docker(List.of("docker", "load", "-i", archive.toString()));
    } finally {
      new ProcessBuilder("docker", "rmi", "-f", source).start().waitFor(30, TimeUnit.SECONDS);
    }
  }

  private static void assumeDocker() throws Exception {
    boolean answers;
    try {
      answers = new ProcessBuilder("docker", "version").start().waitFor() == 0;
    } catch (IOException e) {
      answers = false;
    }
    Assumptions.assumeTrue(answers, "needs a Docker Engine and its CLI");
  }

  private static String hostArch() {
    String arch = System.getProperty("os.arch");
    return arch.equals("aarch64") ? "arm64" : arch;
  }

  private static void docker(List<String> command) throws Exception {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes());
    assertThat(process.waitFor()).as(command + ": " + output).isZero();
  }
}
