package dev.paddock.backend.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The default agent command mirrors the ./paddock launcher. */
class AgentCommandTest {
  @TempDir Path home;

  private final Path javaHome = Path.of(System.getProperty("java.home"));

  private Path target() throws IOException {
    Path target = Files.createDirectories(home.resolve("paddock-agent-server/target"));
    Files.writeString(target.resolve("paddock-agent-server-all.jar"), "jar");
    Files.writeString(
        home.resolve("paddock-agent-server/agent-jvm.options"),
        "# comment\n-XX:TieredStopAtLevel=1\n\n-Xmx64m\n");
    return target;
  }

  @Test
  void usesThisJdkTheOptionsFileAndTheAotCacheWrittenByThisJdk() throws IOException {
    Path target = target();
    Files.writeString(target.resolve("agent-server.cache-jdk"), javaHome.toRealPath() + "\n");
    Files.writeString(target.resolve("agent-server.aot"), "cache");

    List<String> argv = AgentCommand.defaultCommand(home, javaHome);

    assertThat(argv)
        .containsExactly(
            javaHome.resolve("bin/java").toString(),
            "-XX:TieredStopAtLevel=1",
            "-Xmx64m",
            "-XX:AOTCache=" + target.resolve("agent-server.aot"),
            "-jar",
            target.resolve("paddock-agent-server-all.jar").toString());
  }

  @Test
  void ignoresACacheWrittenByAnotherJdk() throws IOException {
    Path target = target();
    Files.writeString(target.resolve("agent-server.cache-jdk"), "/some/other/jdk\n");
    Files.writeString(target.resolve("agent-server.aot"), "cache");

    assertThat(AgentCommand.defaultCommand(home, javaHome))
        .noneMatch(arg -> arg.startsWith("-XX:AOTCache") || arg.startsWith("-XX:SharedArchive"));
  }

  @Test
  void fallsBackToACdsArchiveWhenThereIsNoAotCache() throws IOException {
    Path target = target();
    Files.writeString(target.resolve("agent-server.cache-jdk"), javaHome.toString());
    Files.writeString(target.resolve("agent-server.jsa"), "archive");

    assertThat(AgentCommand.defaultCommand(home, javaHome))
        .contains("-XX:SharedArchiveFile=" + target.resolve("agent-server.jsa"));
  }

  @Test
  void ignoresACacheOlderThanTheJar() throws IOException {
    // The jar was rebuilt without retraining: the cache holds the previous build's classes.
    Path target = target();
    Files.writeString(target.resolve("agent-server.cache-jdk"), javaHome.toRealPath() + "\n");
    Path aot = Files.writeString(target.resolve("agent-server.aot"), "cache");
    Files.setLastModifiedTime(
        aot,
        java.nio.file.attribute.FileTime.fromMillis(
            Files.getLastModifiedTime(target.resolve("paddock-agent-server-all.jar")).toMillis()
                - 60_000));

    assertThat(AgentCommand.defaultCommand(home, javaHome))
        .noneMatch(arg -> arg.startsWith("-XX:AOTCache") || arg.startsWith("-XX:SharedArchive"));
  }
}
