package dev.paddock.runtimeapi;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Settings errors stop the runtime API before it starts anything, naming the setting. */
class RuntimeApiSettingsTest {
  @Test
  void aMissingKeyIsNamed() {
    assertThatThrownBy(() -> RuntimeApiMain.start(Map.of("RUNTIME", "process")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("PADDOCK_RUNTIME_API_KEY");
  }

  @Test
  void aShortKeyOrABadLimitIsNamed() {
    assertThatThrownBy(() -> RuntimeApiMain.start(Map.of("PADDOCK_RUNTIME_API_KEY", "short")))
        .hasMessageContaining("PADDOCK_RUNTIME_API_KEY");
    assertThatThrownBy(
            () ->
                RuntimeApiMain.start(
                    Map.of(
                        "PADDOCK_RUNTIME_API_KEY", "a-long-enough-runtime-api-key",
                        "PADDOCK_RUNTIME_API_MAX_SANDBOXES", "0")))
        .hasMessageContaining("PADDOCK_RUNTIME_API_MAX_SANDBOXES");
  }

  @Test
  void onlyALocalBackendCanServe() {
    assertThatThrownBy(() -> RuntimeApiMain.start(Map.of("RUNTIME", "kubernetes")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("RUNTIME='kubernetes'")
        .hasMessageContaining("process");
  }
}
