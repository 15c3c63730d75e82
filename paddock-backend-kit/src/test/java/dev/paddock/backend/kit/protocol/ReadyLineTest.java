package dev.paddock.backend.kit.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ReadyLineTest {
  @Test
  void whatTheAgentWritesIsWhatTheParserReads() {
    ReadyLine written = new ReadyLine("0.0.0.0", 41234);

    assertThat(ReadyLine.parse(written.format("workspace /w"))).contains(written);
    assertThat(ReadyLine.parse(written.format(""))).contains(written);
    assertThat(written.format("workspace /w"))
        .isEqualTo("paddock agent-server listening on http://0.0.0.0:41234 (workspace /w)");
  }

  @Test
  void aCarriageReturnOrPaddingDoesNotHideTheLine() {
    assertThat(ReadyLine.parse("  paddock agent-server listening on http://127.0.0.1:80\r"))
        .contains(new ReadyLine("127.0.0.1", 80));
  }

  @Test
  void otherLinesAreNotReadyLines() {
    assertThat(ReadyLine.parse("WARNING listening on http://127.0.0.1:1")).isEmpty();
    assertThat(ReadyLine.parse("echo paddock agent-server listening on http://127.0.0.1:1"))
        .isEmpty();
    assertThat(ReadyLine.parse("paddock agent-server listening on http://127.0.0.1:0")).isEmpty();
    assertThat(ReadyLine.parse("paddock agent-server listening on http://127.0.0.1:99999"))
        .isEmpty();
    assertThat(ReadyLine.parse("paddock agent-server listening on http://127.0.0.1:80x")).isEmpty();
  }

  @Test
  void anIpv6HostKeepsItsColons() {
    assertThat(ReadyLine.parse("paddock agent-server listening on http://[::1]:8000 (x)"))
        .contains(new ReadyLine("[::1]", 8000));
  }

  @Test
  void aPortOutsideTheRangeCannotBeWritten() {
    assertThatThrownBy(() -> new ReadyLine("h", 0)).isInstanceOf(IllegalArgumentException.class);
  }
}
