package dev.paddock.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Base64;
import org.junit.jupiter.api.Test;

class SessionKeysTest {
  private static final String SECRET = "session-keys-test-master-secret-0123456789";

  @Test
  void anotherProcessWithTheSameSecretDerivesTheSameKey() {
    assertThat(new SessionKeys(SECRET).sessionKey("sb-1", 7))
        .isEqualTo(new SessionKeys(SECRET).sessionKey("sb-1", 7));
  }

  @Test
  void keysDifferByGenerationSandboxAndSecret() {
    SessionKeys keys = new SessionKeys(SECRET);
    String key = keys.sessionKey("sb-1", 7);

    assertThat(keys.sessionKey("sb-1", 8)).isNotEqualTo(key);
    assertThat(keys.sessionKey("sb-2", 7)).isNotEqualTo(key);
    assertThat(new SessionKeys(SECRET + "x").sessionKey("sb-1", 7)).isNotEqualTo(key);
    assertThat(keys.adminKey("sb-1")).isNotEqualTo(key);
  }

  @Test
  void aKeyHas256BitsInBase64Url() {
    String key = new SessionKeys(SECRET).sessionKey("sb-1", 0);

    assertThat(key).hasSize(43).matches("[A-Za-z0-9_-]+");
    assertThat(Base64.getUrlDecoder().decode(key)).hasSize(32);
  }

  @Test
  void firstGenerationsAreRandomAndLeaveRoomToAdvance() {
    SessionKeys keys = new SessionKeys(SECRET);
    long a = keys.firstGeneration();
    long b = keys.firstGeneration();

    assertThat(a).isNotEqualTo(b);
    assertThat(a).isBetween(0L, Long.MAX_VALUE >>> 1);
  }
}
