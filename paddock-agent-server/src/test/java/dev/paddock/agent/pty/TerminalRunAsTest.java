package dev.paddock.agent.pty;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.agent.user.RunAs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** With {@code --run-as}, a terminal's shell is that user and owns its terminal. Needs root. */
class TerminalRunAsTest {
  @RegisterExtension
  final AgentFixture agent = new AgentFixture(b -> b.runAs(new RunAs(65534, 65534)));

  private final TerminalClient terminals = new TerminalClient(agent);

  @Test
  void terminalRunsAsTheCommandUserWithoutCapabilities() throws Exception {
    String id = terminals.create("{}");
    terminals.type(
        id,
        "echo ids=$(id -u):$(id -g):$(stat -c %u $(tty)); grep CapEff /proc/self/status;"
            + " echo end-$((1+1))\r");

    String output = terminals.awaitOutput(id, "end-2");

    assertThat(output).contains("ids=65534:65534:65534").contains("CapEff:\t0000000000000000");
  }
}
