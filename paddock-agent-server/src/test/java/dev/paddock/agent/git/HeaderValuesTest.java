package dev.paddock.agent.git;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HeaderValuesTest {
  @Test
  void redactsUserInfoWhateverTheSchemeCaseOrPassword() {
    assertThat(HeaderValues.redactRemote("https://user:token@host/x.git"))
        .isEqualTo("https://***@host/x.git");
    assertThat(HeaderValues.redactRemote("HTTPS://Token@Host:8443/x"))
        .isEqualTo("HTTPS://***@Host:8443/x");
    assertThat(HeaderValues.redactRemote("https://u:p@ss@host/x")).isEqualTo("https://***@host/x");
    assertThat(HeaderValues.redactRemote("git@github.com:acme/x.git"))
        .isEqualTo("git@github.com:acme/x.git");
  }

  @Test
  void redactsQueryValuesAndEveryLine() {
    assertThat(HeaderValues.redactRemote("https://host/x.git?token=abc&ref=main#frag"))
        .isEqualTo("https://host/x.git?token=***&ref=***#frag");
    assertThat(HeaderValues.redactRemote("https://a:b@h1/x\nhttps://c:d@h2/y"))
        .isEqualTo("https://***@h1/x\nhttps://***@h2/y");
  }

  @Test
  void percentEncodesPercentControlsSpacesAndNonAscii() {
    assertThat(HeaderValues.percentEncode("100%\r\nX-Evil: 1 ü"))
        .isEqualTo("100%25%0D%0AX-Evil:%201%20%C3%BC");
    assertThat(HeaderValues.percentEncode("/plain/path-1.2_3~x")).isEqualTo("/plain/path-1.2_3~x");
  }
}
