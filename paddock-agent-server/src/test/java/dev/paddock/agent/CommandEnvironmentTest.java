package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.core.KeyRing;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What commands see of the agent's environment: everything but its keys. */
class CommandEnvironmentTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private final BashClient bash = new BashClient(agent);

  @Test
  void commandsDoNotSeeTheAgentKeys() throws Exception {
    Map<String, Object> result =
        bash.execute(
            "command",
            "env; echo ---; tr '\\0' '\\n' < /proc/self/environ; echo ---;"
                + " tr '\\0' '\\n' < /proc/$PPID/environ");
    String output = (String) result.get("stdout");
    assertThat(output)
        .contains("PADDOCK_SANDBOX=1")
        .doesNotContain("SESSION_API_KEY")
        .doesNotContain("OH_SESSION_API_KEYS_")
        .doesNotContain(AgentFixture.KEY)
        .doesNotContain(AgentFixture.ADMIN_KEY)
        .doesNotContain(KeyRing.sha256Hex(AgentFixture.KEY));
  }

  @Test
  void extraEnvironmentReachesTheCommand() throws Exception {
    assertThat(bash.execute("command", "echo $GREETING", "env", Map.of("GREETING", "hello")))
        .containsEntry("stdout", "hello\n");
  }

  @Test
  void sessionsDoNotSeeTheAgentKeysEither() throws Exception {
    String output =
        (String)
            bash.execute("command", "env; echo; cat /proc/$$/environ", "session", "s")
                .get("stdout");
    assertThat(output)
        .contains("PADDOCK_SANDBOX=1")
        .doesNotContain("SESSION_API_KEY")
        .doesNotContain(AgentFixture.KEY)
        .doesNotContain(AgentFixture.ADMIN_KEY);
  }
}
