package dev.paddock.api.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SettingsTest {
  private static final Setting<Integer> PORT =
      Setting.integer("PADDOCK_PORT", "port", 0, 65535).withDefault(3000);
  private static final Setting<Boolean> PAUSE =
      Setting.bool("PADDOCK_PAUSE_OLDEST", "pause").withDefault(false);
  private static final Setting<Duration> TIMEOUT =
      Setting.duration("PADDOCK_START_TIMEOUT_SECONDS", "timeout")
          .withDefault(Duration.ofMinutes(2));
  private static final Setting<Long> MEMORY =
      Setting.size("docker.memory", "memory").withAliases("PADDOCK_DOCKER_MEMORY");
  private static final Setting<Double> CPUS = Setting.decimal("docker.cpus", "cpus", 0);
  private static final Setting<String> FORMAT =
      Setting.oneOf("PADDOCK_LOG_FORMAT", "format", "text", "json").withDefault("text");
  private static final Setting<String> SECRET =
      Setting.string("PADDOCK_MASTER_SECRET", "s").secret();
  private static final Setting<Map<String, String>> ENV =
      Setting.family("docker.spec.env.", "spec env");
  private static final List<Setting<?>> ALL =
      List.of(PORT, PAUSE, TIMEOUT, MEMORY, CPUS, FORMAT, SECRET, ENV);

  @Test
  void anInvalidValueNamesTheSettingTheValueAndWhatIsAllowed() {
    assertThatThrownBy(() -> Settings.of(ALL, Map.of("PADDOCK_PORT", "abc")))
        .isInstanceOf(SettingsException.class)
        .hasMessage(
            "PADDOCK_PORT='abc' (from env) is invalid: expected a whole number from 0 to 65535");
    assertThatThrownBy(() -> Settings.of(ALL, Map.of("PADDOCK_PORT", "70000")))
        .hasMessageContaining("from 0 to 65535");
  }

  @Test
  void everyKindOfValueIsCheckedAndAllProblemsAreListedAtOnce() {
    Map<String, String> bad =
        Map.of(
            "PADDOCK_PAUSE_OLDEST", "maybe",
            "PADDOCK_START_TIMEOUT_SECONDS", "5 parsecs",
            "PADDOCK_DOCKER_MEMORY", "lots",
            "docker.cpus", "-1",
            "PADDOCK_LOG_FORMAT", "xml");
    assertThatThrownBy(() -> Settings.of(ALL, bad))
        .isInstanceOfSatisfying(
            SettingsException.class,
            e ->
                assertThat(e.problems())
                    .hasSize(5)
                    .anySatisfy(
                        p -> assertThat(p).contains("PADDOCK_PAUSE_OLDEST='maybe'", "yes/no"))
                    .anySatisfy(
                        p -> assertThat(p).contains("PADDOCK_START_TIMEOUT_SECONDS", "30s", "5m"))
                    .anySatisfy(p -> assertThat(p).contains("PADDOCK_DOCKER_MEMORY='lots'", "512m"))
                    .anySatisfy(p -> assertThat(p).contains("docker.cpus='-1'", "greater than 0"))
                    .anySatisfy(
                        p -> assertThat(p).contains("PADDOCK_LOG_FORMAT='xml'", "text, json")));
  }

  @Test
  void aSecretsValueNeverAppearsInAnError() {
    Setting<String> checked = SECRET.requiring(s -> s.length() >= 32, "at least 32 bytes");
    assertThatThrownBy(() -> Settings.of(List.of(checked), Map.of(checked.name(), "hunter2")))
        .hasMessageContaining("PADDOCK_MASTER_SECRET=(secret)")
        .hasMessageContaining("at least 32 bytes")
        .hasMessageNotContaining("hunter2");
  }

  @Test
  void booleansMeanTheSameInEverySpelling() {
    for (String yes : List.of("true", "TRUE", "1", "yes", "Yes", "on", "ON")) {
      assertThat(Settings.of(ALL, Map.of(PAUSE.name(), yes)).get(PAUSE)).as(yes).isTrue();
    }
    for (String no : List.of("false", "False", "0", "no", "NO", "off", "Off")) {
      assertThat(Settings.of(ALL, Map.of(PAUSE.name(), no)).get(PAUSE)).as(no).isFalse();
    }
  }

  @Test
  void durationsAndSizesAreParsedOneWay() {
    Map<String, Duration> durations =
        Map.of(
            "30", Duration.ofSeconds(30),
            "30s", Duration.ofSeconds(30),
            "5m", Duration.ofMinutes(5),
            "1h", Duration.ofHours(1),
            "500ms", Duration.ofMillis(500),
            "PT3S", Duration.ofSeconds(3));
    durations.forEach(
        (text, expected) ->
            assertThat(Settings.of(ALL, Map.of(TIMEOUT.name(), text)).get(TIMEOUT))
                .as(text)
                .isEqualTo(expected));
    Map<String, Long> sizes =
        Map.of("512m", 512L << 20, "2g", 2L << 30, "2GiB", 2L << 30, "1024", 1024L, "none", 0L);
    sizes.forEach(
        (text, expected) ->
            assertThat(Settings.of(ALL, Map.of(MEMORY.name(), text)).get(MEMORY))
                .as(text)
                .isEqualTo(expected));
  }

  @Test
  void aFlagOverridesTheEnvironmentWhichOverridesTheFileAndEachIsRecorded() {
    Settings settings =
        Settings.builder()
            .declare(ALL)
            .source(SettingSource.FILE, Map.of("PADDOCK_PORT", "1", "docker.memory", "1g"))
            .source(SettingSource.ENV, Map.of("PADDOCK_PORT", "2", "PADDOCK_DOCKER_MEMORY", "2g"))
            .source(SettingSource.FLAG, Map.of("PADDOCK_PORT", "3"))
            .build();
    assertThat(settings.get(PORT)).isEqualTo(3);
    assertThat(settings.source(PORT)).isEqualTo(SettingSource.FLAG);
    assertThat(settings.get(MEMORY)).as("the env alias beats the file").isEqualTo(2L << 30);
    assertThat(settings.effective(MEMORY))
        .isEqualTo(
            new Settings.Effective(
                "docker.memory", "2g", SettingSource.ENV, "PADDOCK_DOCKER_MEMORY"));
    assertThat(settings.effective(FORMAT))
        .isEqualTo(
            new Settings.Effective(
                "PADDOCK_LOG_FORMAT", "text", SettingSource.DEFAULT, "PADDOCK_LOG_FORMAT"));
    assertThat(settings.effective(CPUS).value()).isEqualTo("(unset)");
    assertThat(settings.values())
        .containsEntry("docker.memory", "2g")
        .doesNotContainKey("PADDOCK_DOCKER_MEMORY")
        .containsEntry("PADDOCK_PORT", "3");
  }

  @Test
  void theDeclaredNameWinsOverAnAliasInOneSource() {
    Settings settings =
        Settings.of(ALL, Map.of("docker.memory", "1g", "PADDOCK_DOCKER_MEMORY", "2g"));
    assertThat(settings.get(MEMORY)).isEqualTo(1L << 30);
  }

  @Test
  void secretsAreRedacted() {
    Settings settings =
        Settings.of(ALL, Map.of(SECRET.name(), "do-not-print-me", "docker.spec.env.A", "1"));
    assertThat(settings.effective(SECRET).value()).isEqualTo("(secret)");
    assertThat(settings.effective())
        .allSatisfy(e -> assertThat(e.value()).doesNotContain("do-not-print-me"));
    assertThat(settings.get(SECRET)).isEqualTo("do-not-print-me");
    assertThat(settings.get(ENV)).containsExactly(Map.entry("A", "1"));
  }

  @Test
  void anUnknownNameIsAWarningWithTheClosestKnownName() {
    Settings settings =
        Settings.builder()
            .declare(ALL)
            .knownElsewhere(List.of("PADDOCK_URL", "PADDOCK_TEST_"))
            .source(
                SettingSource.ENV,
                Map.of(
                    "PADDOCK_PROT", "1",
                    "PADDOCK_DOCKER_MEMROY", "1g",
                    "docker.cpu", "2",
                    "PADDOCK_URL", "x",
                    "PADDOCK_TEST_POSTGRES_URL", "x",
                    "docker.spec.env.FOO", "bar",
                    "HOME", "/root",
                    "PADDOCK_ZZZZZZZZZZZZ", "1"))
            .build();
    assertThat(settings.warnings())
        .containsExactlyInAnyOrder(
            "unknown setting PADDOCK_PROT (from env); did you mean PADDOCK_PORT?",
            "unknown setting PADDOCK_DOCKER_MEMROY (from env); did you mean PADDOCK_DOCKER_MEMORY?",
            "unknown setting docker.cpu (from env); did you mean docker.cpus?",
            "unknown setting PADDOCK_ZZZZZZZZZZZZ (from env)");
  }

  @Test
  void flagsAreDerivedFromNames() {
    assertThat(PORT.flag()).isEqualTo("--port");
    assertThat(MEMORY.flag()).isEqualTo("--docker-memory");
    assertThat(Setting.string("RUNTIME", "r").flag()).isEqualTo("--runtime");
    assertThat(Setting.string("process.ready-timeout", "r").flag())
        .isEqualTo("--process-ready-timeout");
  }
}
