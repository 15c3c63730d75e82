package dev.paddock.agent.bash;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The scrubbing rule for the environment commands inherit from the agent. */
class CommandEnvironmentRuleTest {
  @Test
  void dropsEveryAgentKeyAndSecret() {
    Map<String, String> env =
        BashService.commandEnvironment(
            Map.of(
                "SESSION_API_KEY", "k",
                "OH_SESSION_API_KEYS_0", "k0",
                "OH_SESSION_API_KEYS_17", "k17",
                "OH_SECRET_KEY", "s",
                "PADDOCK_AGENT_ADMIN_KEY", "a",
                "PADDOCK_AGENT_ADMIN_KEY_SHA256", "d",
                "PADDOCK_API_TOKEN", "t",
                "PADDOCK_CLIENT_SECRET", "c"));
    assertThat(env).containsOnlyKeys("PADDOCK_SANDBOX");
  }

  @Test
  void keepsOrdinaryVariablesAndMarksTheSandbox() {
    Map<String, String> env =
        BashService.commandEnvironment(
            Map.of(
                "PATH", "/usr/bin:/bin",
                "HOME", "/home/agent",
                "PADDOCK_WORKSPACE", "/workspace",
                "MY_SESSION_API_KEY_NOTE", "user data"));
    assertThat(env)
        .containsEntry("PATH", "/usr/bin:/bin")
        .containsEntry("HOME", "/home/agent")
        .containsEntry("PADDOCK_WORKSPACE", "/workspace")
        .containsEntry("MY_SESSION_API_KEY_NOTE", "user data")
        .containsEntry("PADDOCK_SANDBOX", "1");
  }
}
