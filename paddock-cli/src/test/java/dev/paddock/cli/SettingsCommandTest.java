package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.settings.Setting;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code paddock server --help}, {@code paddock config} and start-up on bad settings. */
class SettingsCommandTest {
  private Path dataDir;
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  @BeforeEach
  void dataDir() throws IOException {
    dataDir = Files.createTempDirectory("paddock-settings-test-");
  }

  @AfterEach
  void cleanUp() throws IOException {
    try (Stream<Path> paths = Files.walk(dataDir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private int run(Map<String, String> env, String... args) {
    CommandLine line = Main.commandLine(env);
    line.setOut(new PrintWriter(out, true));
    line.setErr(new PrintWriter(err, true));
    return line.execute(args);
  }

  @Test
  void serverHelpListsEveryDeclaredSettingWithItsFlagAndDefault() {
    assertThat(run(Map.of(), "server", "--help")).isZero();
    String help = out.toString();
    SettingsCatalog catalog = SettingsCatalog.discover();
    assertThat(catalog.groups())
        .extracting(SettingsCatalog.Group::title)
        .contains(
            "Server", "Control plane", "Backend process", "Backend docker", "Archive store s3");
    for (Setting<?> setting : catalog.all()) {
      assertThat(help).as(setting.name()).contains("  " + setting.name());
      assertThat(help).as(setting.name()).contains(setting.description());
      if (!setting.isFamily()) {
        assertThat(help).as(setting.name()).contains(setting.flag() + "=VALUE");
      }
    }
    assertThat(help)
        .contains("PADDOCK_PORT  --port=VALUE")
        .contains("Default: 3000")
        .contains("docker.memory  --docker-memory=VALUE  (also PADDOCK_DOCKER_MEMORY)")
        .contains("--set=NAME=VALUE");
  }

  @Test
  void configPrintsEffectiveValuesWithTheirSourceAndRedactsSecrets() throws IOException {
    Files.writeString(
        dataDir.resolve("paddock.properties"),
        "PADDOCK_PORT=4000\ndocker.memory=1g\nPADDOCK_DATABASE_PASSWORD=pg-pass-123\n"
            + "ssh.hots=a,b\nkubernetes.namepsace=agents\n");
    Map<String, String> env =
        Map.of(
            "PADDOCK_DATA_DIR", dataDir.toString(),
            "PADDOCK_MASTER_SECRET", "a-master-secret-of-more-than-32-bytes!",
            "PADDOCK_DOCKER_MEMORY", "3g",
            "RUNTIME_FILE_ARCHIVE_S3_SECRET_ACCESS_KEY", "s3-secret-456",
            "LLM_API_KEY", "llm-key-789",
            "PADDOCK_MAX_SANDBOXS", "3");

    assertThat(run(env, "config", "--host", "0.0.0.0", "--set", "PADDOCK_PAUSE_OLDEST=yes"))
        .as(err.toString())
        .isZero();

    String config = out.toString();
    assertThat(config)
        .contains("PADDOCK_PORT = 4000  (file)")
        .contains("PADDOCK_HOST = 0.0.0.0  (flag)")
        .contains("PADDOCK_PAUSE_OLDEST = true  (flag)")
        .contains("docker.memory = 3g  (env as PADDOCK_DOCKER_MEMORY)")
        .contains("PADDOCK_LOG_FORMAT = text  (default)")
        .contains("PADDOCK_MASTER_SECRET = (secret)  (env)")
        .contains("PADDOCK_DATABASE_PASSWORD = (secret)  (file)")
        .contains("RUNTIME_FILE_ARCHIVE_S3_SECRET_ACCESS_KEY = (secret)  (env)")
        .contains("LLM_* = LLM_API_KEY=(secret)  (env)")
        .doesNotContain("a-master-secret", "pg-pass-123", "s3-secret-456", "llm-key-789");
    assertThat(err.toString())
        .contains(
            "unknown setting PADDOCK_MAX_SANDBOXS (from env); did you mean PADDOCK_MAX_SANDBOXES?")
        .contains("unknown setting ssh.hots (from file); did you mean ssh.hosts?")
        .contains(
            "unknown setting kubernetes.namepsace (from file); did you mean kubernetes.namespace?");
  }

  @Test
  void serverRefusesToStartOnAnInvalidValueNamingItAndWhatIsAllowed() {
    Map<String, String> env = Map.of("PADDOCK_DATA_DIR", dataDir.toString(), "PADDOCK_PORT", "abc");

    assertThat(run(env, "server")).isEqualTo(2);

    assertThat(err.toString())
        .contains(
            "PADDOCK_PORT='abc' (from env) is invalid: expected a whole number from 0 to 65535");
    assertThat(dataDir.resolve("paddock.db")).doesNotExist();
  }

  @Test
  void aBackendSettingIsCheckedAtStartUpToo() {
    Map<String, String> env =
        Map.of("PADDOCK_DATA_DIR", dataDir.toString(), "PADDOCK_DOCKER_PIDS_LIMIT", "many");

    assertThat(run(env, "server", "--runtime", "process")).isEqualTo(2);

    assertThat(err.toString())
        .contains(
            "PADDOCK_DOCKER_PIDS_LIMIT='many' (from env) is invalid: expected a whole number");
  }

  @Test
  void anUnknownRuntimeNamesTheSettingAndTheChoices() {
    Map<String, String> env = Map.of("PADDOCK_DATA_DIR", dataDir.toString());

    assertThat(run(env, "server", "--set", "RUNTIME=firecracker")).isEqualTo(2);

    assertThat(err.toString()).contains("RUNTIME='firecracker' is invalid: expected one of [");
  }
}
