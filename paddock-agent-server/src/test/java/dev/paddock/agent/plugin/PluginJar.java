package dev.paddock.agent.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * Builds a plugin jar the way an integrator would: compile against the agent, add the services
 * file.
 */
final class PluginJar {
  private PluginJar() {}

  /** Compiles {@code source} (class {@code className}) into {@code dir/<jarName>}. */
  static Path build(Path dir, String jarName, String className, String source) throws Exception {
    Path src = Files.createDirectories(dir.resolve("src-" + jarName));
    Path classes = Files.createDirectories(dir.resolve("classes-" + jarName));
    Path file = src.resolve(className.substring(className.lastIndexOf('.') + 1) + ".java");
    Files.writeString(file, source);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    int status =
        javac.run(
            null,
            null,
            null,
            "-proc:none",
            "-classpath",
            System.getProperty("java.class.path"),
            "-d",
            classes.toString(),
            file.toString());
    assertThat(status).as("plugin compiles").isZero();
    Path jar = Files.createDirectories(dir.resolve("plugins")).resolve(jarName);
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
        Stream<Path> built = Files.walk(classes)) {
      for (Path c : built.filter(Files::isRegularFile).toList()) {
        out.putNextEntry(new JarEntry(classes.relativize(c).toString()));
        Files.copy(c, out);
        out.closeEntry();
      }
      out.putNextEntry(new JarEntry("META-INF/services/" + AgentPlugin.class.getName()));
      write(out, className + "\n");
      out.closeEntry();
    }
    return jar.getParent();
  }

  private static void write(OutputStream out, String text) throws Exception {
    out.write(text.getBytes(StandardCharsets.UTF_8));
  }
}
