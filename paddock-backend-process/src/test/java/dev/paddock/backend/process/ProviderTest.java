package dev.paddock.backend.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.spi.SandboxBackendProvider;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

class ProviderTest {
  @Test
  void serviceLoaderFindsTheProviderUnderBothNames() {
    assertThat(ServiceLoader.load(SandboxBackendProvider.class))
        .filteredOn(p -> p.names().contains("process") && p.names().contains("local"))
        .hasSize(1)
        .first()
        .isInstanceOf(ProcessBackendProvider.class);
  }

  @Test
  void specServiceHasOneConfiguredDefaultSpec() {
    SandboxSpecService specs =
        new ProcessBackendProvider().specs(Map.of("process.spec.env.LLM_MODEL", "m1"));

    SandboxSpec spec = specs.defaultSpec();

    assertThat(spec.id()).isEqualTo("process-default");
    assertThat(spec.command()).isEmpty();
    assertThat(spec.workingDir()).isEqualTo(".");
    assertThat(spec.initialEnv()).containsExactly(Map.entry("LLM_MODEL", "m1"));
    assertThat(specs.get("process-default")).contains(spec);
    assertThat(specs.get("other")).isEmpty();
    assertThat(specs.search(PageRequest.first(10)).items()).containsExactly(spec);
    assertThat(specs.search(new PageRequest(Optional.of("x"), 10)).items()).isEmpty();
  }

  @Test
  void aMalformedTypedSettingIsRejectedNamingIt() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () -> new ProcessBackendProvider().create(Map.of("process.ready-timeout", "soon")))
        .withMessageContaining("process.ready-timeout");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new ProcessBackendProvider().specs(Map.of("process.pids-limit", "0")))
        .withMessageContaining("process.pids-limit");
  }

  @Test
  void theAgentJarSettingIsDeclaredForHelpAndTypoWarnings() {
    assertThat(new ProcessBackendProvider().settings())
        .extracting(setting -> setting.name())
        .contains("PADDOCK_AGENT_JAR", "agent.command");
  }

  @Test
  void unknownFreezerSettingIsRejected() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new ProcessBackendProvider().create(Map.of("process.freezer", "ice")))
        .withMessageContaining("process.freezer");
  }
}
