package dev.paddock.backend.kit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.api.settings.Settings;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeStartException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Finding the agent: an explicit jar, a distribution beside the CLI jar, a source checkout. */
class AgentDistributionTest {
  private static final Path JAVA_HOME = Path.of(System.getProperty("java.home"));

  @TempDir Path temp;

  @Test
  void anExplicitJarWinsAndBringsTheOptionsBesideIt() throws IOException {
    Path dir = Files.createDirectories(temp.resolve("elsewhere"));
    Path jar = Files.writeString(dir.resolve("agent.jar"), "jar");
    Files.writeString(dir.resolve(AgentDistribution.OPTIONS_NAME), "# comment\n-Xmx64m\n\n");
    checkout(temp.resolve("home"));

    AgentDistribution agent = AgentDistribution.locate(settings(Map.of("PADDOCK_AGENT_JAR", jar)));

    assertThat(agent.jar()).isEqualTo(jar);
    assertThat(agent.options()).containsExactly("-Xmx64m");
    assertThat(agent.command(JAVA_HOME))
        .containsExactly(
            JAVA_HOME.resolve("bin/java").toString(), "-Xmx64m", "-jar", jar.toString());
  }

  @Test
  void aDistributionBesideTheCliJarIsPreferredToTheCheckout() throws IOException {
    Path dist = Files.createDirectories(temp.resolve("dist/lib"));
    Path jar = Files.writeString(dist.resolve(AgentDistribution.JAR_NAME), "jar");
    Path home = temp.resolve("home");
    checkout(home);

    assertThat(AgentDistribution.locate(home, Optional.of(dist)).jar()).isEqualTo(jar);
    assertThat(AgentDistribution.locate(home, Optional.of(temp.resolve("empty"))).jar())
        .isEqualTo(home.resolve("paddock-agent-server/target/" + AgentDistribution.JAR_NAME));
  }

  @Test
  void theCheckoutKeepsItsOptionsInTheModule() throws IOException {
    Path home = temp.resolve("home");
    checkout(home);

    AgentDistribution agent = AgentDistribution.locate(home, Optional.empty());

    assertThat(agent.jvmOptions())
        .contains(home.resolve("paddock-agent-server/" + AgentDistribution.OPTIONS_NAME));
    assertThat(agent.options()).containsExactly("-XX:+UseSerialGC");
  }

  @Test
  void noAgentAnywhereIsABinaryMissingFailureNamingEveryPlace() {
    assertThatThrownBy(() -> AgentDistribution.locate(temp, Optional.of(temp.resolve("dist"))))
        .isInstanceOfSatisfying(
            RuntimeStartException.class,
            e -> {
              assertThat(e.failure().kind()).isEqualTo(RuntimeFailure.Kind.BINARY_MISSING);
              assertThat(e.failure().rawDetail())
                  .contains(temp.resolve("dist").toString())
                  .contains("paddock-agent-server/target")
                  .contains("PADDOCK_AGENT_JAR");
            });
    assertThatThrownBy(
            () ->
                AgentDistribution.locate(
                    settings(Map.of("PADDOCK_AGENT_JAR", temp.resolve("none.jar")))))
        .isInstanceOf(RuntimeStartException.class)
        .hasMessageContaining("none.jar");
  }

  @Test
  void anAotCacheIsUsedOnlyForItsOwnJdkAndAJarNoNewerThanIt() throws IOException {
    Path home = temp.resolve("home");
    Path jar = checkout(home);
    Path target = jar.getParent();
    Path aot = Files.writeString(target.resolve("agent-server.aot"), "cache");
    Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minusSeconds(60)));
    AgentDistribution agent = AgentDistribution.locate(home, Optional.empty());

    assertThat(agent.trainedCache(JAVA_HOME)).isEmpty(); // no stamp: trained on an unknown JDK

    Files.writeString(target.resolve("agent-server.cache-jdk"), JAVA_HOME + "\n");
    assertThat(agent.command(JAVA_HOME)).contains("-XX:AOTCache=" + aot);
    assertThat(agent.trainedCache(temp)).isEmpty(); // another JDK

    Files.setLastModifiedTime(jar, FileTime.from(Instant.now().plusSeconds(60)));
    assertThat(agent.trainedCache(JAVA_HOME)).isEmpty(); // the jar was rebuilt after training
  }

  @Test
  void aJdkWithoutJavaIsABinaryMissingFailure() throws IOException {
    checkout(temp.resolve("h"));
    AgentDistribution agent = AgentDistribution.locate(temp.resolve("h"), Optional.empty());
    assertThatThrownBy(() -> agent.command(temp))
        .isInstanceOfSatisfying(
            RuntimeStartException.class,
            e -> assertThat(e.failure().kind()).isEqualTo(RuntimeFailure.Kind.BINARY_MISSING));
  }

  private static Path checkout(Path home) throws IOException {
    Path module = Files.createDirectories(home.resolve("paddock-agent-server/target"));
    Files.writeString(
        home.resolve("paddock-agent-server/" + AgentDistribution.OPTIONS_NAME),
        "-XX:+UseSerialGC\n");
    return Files.writeString(module.resolve(AgentDistribution.JAR_NAME), "jar");
  }

  private static Settings settings(Map<String, Path> values) {
    Map<String, String> text = new java.util.HashMap<>();
    values.forEach((k, v) -> text.put(k, v.toString()));
    return Settings.of(AgentDistribution.SETTINGS, text);
  }
}
