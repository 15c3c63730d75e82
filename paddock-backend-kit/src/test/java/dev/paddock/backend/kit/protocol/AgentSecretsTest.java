package dev.paddock.backend.kit.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.api.KeyDigest;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class AgentSecretsTest {
  private static final String SESSION = KeyDigest.sha256Hex("session");
  private static final String ADMIN = KeyDigest.sha256Hex("admin");

  @Test
  void whatABackendWritesTheAgentReadsBack() throws IOException {
    String lines = AgentSecrets.lines(List.of(SESSION), ADMIN);

    AgentSecrets read = read(lines);

    assertThat(read).isEqualTo(new AgentSecrets(List.of(SESSION), List.of(ADMIN)));
    assertThat(read(read.lines())).isEqualTo(read);
    assertThat(lines).doesNotContain("session\n").doesNotContain("=admin");
  }

  @Test
  void plaintextKeysAreHashedOnArrival() throws IOException {
    AgentSecrets read = read("session_api_key=session\n\n  admin_key = admin \nnoise\n");

    assertThat(read.sessionKeyDigests()).containsExactly(SESSION);
    assertThat(read.adminKeyDigests()).containsExactly(ADMIN);
  }

  @Test
  void emptyInputIsEmpty() throws IOException {
    assertThat(read("").isEmpty()).isTrue();
    assertThat(read("session_api_key=\n").isEmpty()).isTrue();
    assertThat(read("admin_key_sha256=" + ADMIN).isEmpty()).isFalse();
  }

  @Test
  void anUnknownNameOrABadDigestIsRefusedWithoutItsValue() {
    assertThatThrownBy(() -> read("api_key=secret-value\n"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("api_key")
        .hasMessageNotContaining("secret-value");
    assertThatThrownBy(() -> read("admin_key_sha256=secret-value\n"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("64 hex digits")
        .hasMessageNotContaining("secret-value");
    assertThatThrownBy(() -> AgentSecrets.lines(List.of("short"), ""))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static AgentSecrets read(String text) throws IOException {
    return AgentSecrets.read(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)));
  }
}
