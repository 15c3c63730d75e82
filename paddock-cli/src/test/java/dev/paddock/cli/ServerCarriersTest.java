package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A real {@code paddock server} runs its virtual threads on four carriers per core ({@link
 * Carriers}), read from the server JVM's own scheduler ({@code jcmd <pid>
 * Thread.vthread_scheduler}, JDK 24 and later), and an operator's own setting wins.
 */
class ServerCarriersTest {
  private static final Pattern PARALLELISM = Pattern.compile("parallelism = (\\d+)");

  @RegisterExtension final ServerProcess server = new ServerProcess();

  @Test
  void theServersVirtualThreadsRunOnFourCarriersPerCore() throws Exception {
    server.start();

    assertThat(parallelism(server.pid()))
        .isEqualTo(Carriers.PER_CORE * Runtime.getRuntime().availableProcessors());
  }

  @Test
  void anOperatorsOwnNumberOfCarriersWins() throws Exception {
    server.start(Map.of("JDK_JAVA_OPTIONS", "-D" + Carriers.PARALLELISM + "=3"));

    assertThat(parallelism(server.pid())).isEqualTo(3);
  }

  /** The parallelism of the virtual-thread scheduler of the JVM {@code pid}. */
  private static int parallelism(long pid) throws IOException, InterruptedException {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    Process process =
        new ProcessBuilder(jcmd.toString(), Long.toString(pid), "Thread.vthread_scheduler")
            .redirectErrorStream(true)
            .start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("jcmd ended").isTrue();
    assumeFalse(
        out.contains("Unknown diagnostic command"),
        "this JDK's jcmd cannot show the virtual-thread scheduler (JDK 24+)");
    Matcher m = PARALLELISM.matcher(out);
    assertThat(m.find()).as("jcmd said: %s", out).isTrue();
    return Integer.parseInt(m.group(1));
  }
}
