package dev.paddock.controlplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxSpec;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ConfiguredSpecServiceTest {
  private final ConfiguredSpecService specs =
      ConfiguredSpecService.of(
          List.of(
              SandboxSpec.builder("a").build(),
              SandboxSpec.builder("b").build(),
              SandboxSpec.builder("c").build()),
          ForwardedEnvironment.fromSettings(Map.of("LLM_API_BASE", "http://127.0.0.1:1")));

  @Test
  void theFirstSpecIsTheDefaultAndEverySpecCarriesTheForwardedEnvironment() {
    assertThat(specs.defaultSpec().id()).isEqualTo("a");
    assertThat(specs.get("c").orElseThrow().initialEnv())
        .containsEntry("LLM_API_BASE", "http://127.0.0.1:1");
    assertThat(specs.get("nope")).isEmpty();
  }

  @Test
  void pagesAreSlicesOfTheList() {
    Page<SandboxSpec> first = specs.search(PageRequest.first(2));
    assertThat(first.items()).extracting(SandboxSpec::id).containsExactly("a", "b");
    Page<SandboxSpec> second = specs.search(new PageRequest(first.nextPageId(), 2));
    assertThat(second.items()).extracting(SandboxSpec::id).containsExactly("c");
    assertThat(second.nextPageId()).isEmpty();
    assertThatThrownBy(() -> specs.search(new PageRequest(Optional.of("x"), 2)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void emptyOrDuplicateListsAreRejected() {
    assertThatThrownBy(() -> ConfiguredSpecService.of(List.of(), ForwardedEnvironment.none()))
        .isInstanceOf(IllegalArgumentException.class);
    SandboxSpec twice = SandboxSpec.builder("same").build();
    assertThatThrownBy(
            () -> ConfiguredSpecService.of(List.of(twice, twice), ForwardedEnvironment.none()))
        .hasMessageContaining("same");
  }
}
