package dev.paddock.controlplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.api.SandboxSpec;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ForwardedEnvironmentTest {
  @Test
  void forwardsLlmAndLmnrVariablesAndTheJsonSettingWhichWins() {
    ForwardedEnvironment env =
        ForwardedEnvironment.fromSettings(
            Map.of(
                "LLM_MODEL", "host-model",
                "LMNR_PROJECT_API_KEY", "lmnr",
                "HOME", "/root",
                "OH_AGENT_SERVER_ENV",
                    "{\"LLM_MODEL\": \"json-model\", \"DEBUG\": 1, \"X\": true}"));

    assertThat(env.variables())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "LLM_MODEL", "json-model",
                "LMNR_PROJECT_API_KEY", "lmnr",
                "DEBUG", "1",
                "X", "true"));
  }

  @Test
  void forwardedVariablesOverrideTheSpecsOwn() {
    SandboxSpec spec =
        SandboxSpec.builder("s").env(Map.of("LLM_MODEL", "spec-model", "KEEP", "me")).build();
    ForwardedEnvironment env = ForwardedEnvironment.fromSettings(Map.of("LLM_MODEL", "host"));

    assertThat(env.applyTo(spec).initialEnv())
        .containsExactlyInAnyOrderEntriesOf(Map.of("LLM_MODEL", "host", "KEEP", "me"));
  }

  @Test
  void invalidJsonFailsAtOnceWithoutEchoingTheValue() {
    assertThatThrownBy(
            () -> ForwardedEnvironment.fromSettings(Map.of("OH_AGENT_SERVER_ENV", "{sk-secret")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("OH_AGENT_SERVER_ENV")
        .hasMessageNotContaining("sk-secret");
    assertThatThrownBy(
            () -> ForwardedEnvironment.fromSettings(Map.of("OH_AGENT_SERVER_ENV", "[\"a\"]")))
        .hasMessageContaining("JSON object");
    assertThatThrownBy(
            () -> ForwardedEnvironment.fromSettings(Map.of("OH_AGENT_SERVER_ENV", "{\"A\":{}}")))
        .hasMessageContaining("'A'");
  }
}
