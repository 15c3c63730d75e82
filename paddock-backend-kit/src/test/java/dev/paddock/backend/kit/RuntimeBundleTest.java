package dev.paddock.backend.kit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What can be checked of the bundle without building one (jlink and training take a minute). */
class RuntimeBundleTest {
  @TempDir Path temp;

  @Test
  void theEntryScriptTravelsWithTheKit() {
    String script = new String(RuntimeBundle.entryScript(), StandardCharsets.UTF_8);

    assertThat(script).startsWith("#!/bin/sh").contains("fail 121").contains("fail 124");
  }

  @Test
  void theKeyChangesWithTheJarAndTheOptions() throws IOException {
    Path jar = Files.writeString(temp.resolve("a.jar"), "one");
    Path options = Files.writeString(temp.resolve("o"), "-Xmx64m\n");
    String key = RuntimeBundle.key(jar, Optional.of(options));

    assertThat(key).matches("agent-[0-9a-f]{16}");
    assertThat(RuntimeBundle.key(jar, Optional.of(options))).isEqualTo(key);
    assertThat(RuntimeBundle.key(jar, Optional.empty())).isNotEqualTo(key);
    Files.writeString(jar, "two");
    assertThat(RuntimeBundle.key(jar, Optional.of(options))).isNotEqualTo(key);
  }
}
