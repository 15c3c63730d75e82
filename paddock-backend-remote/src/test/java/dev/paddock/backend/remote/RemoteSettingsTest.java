package dev.paddock.backend.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class RemoteSettingsTest {
  @Test
  void runtimesAreUrlKeyPairsAndTheKeyIsKeptOutOfNames() {
    RemoteSettings settings =
        RemoteSettings.from(
            Map.of("PADDOCK_REMOTE_RUNTIMES", "http://a:8010/=key=1, https://b.example=k2"));
    assertThat(settings.hosts())
        .containsExactly(
            new RemoteHost("http://a:8010", "key=1"), new RemoteHost("https://b.example", "k2"));
    assertThat(settings.hosts().get(0).toString()).doesNotContain("key");
    assertThat(settings.client()).isEqualTo("paddock");
  }

  @Test
  void aMissingOrMalformedSettingIsNamed() {
    assertThatThrownBy(() -> RemoteSettings.from(Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("PADDOCK_REMOTE_RUNTIMES");
    assertThatThrownBy(() -> RemoteSettings.from(Map.of("PADDOCK_REMOTE_RUNTIMES", "ftp://a=k")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("PADDOCK_REMOTE_RUNTIMES");
    assertThatThrownBy(
            () ->
                RemoteSettings.from(Map.of("PADDOCK_REMOTE_RUNTIMES", "http://a:1=k,http://a:1=j")))
        .hasMessageContaining("twice");
    assertThatThrownBy(
            () ->
                RemoteSettings.from(
                    Map.of(
                        "PADDOCK_REMOTE_RUNTIMES", "http://a=k", "PADDOCK_REMOTE_CLIENT", "a b")))
        .hasMessageContaining("PADDOCK_REMOTE_CLIENT");
  }
}
