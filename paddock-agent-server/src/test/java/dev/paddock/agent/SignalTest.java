package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.core.Signal;
import org.junit.jupiter.api.Test;

/** Signal names as clients send them, for commands and terminals alike. */
class SignalTest {
  @Test
  void aNameWithOrWithoutSigInAnyCaseOrANumberIsTheSignal() {
    assertThat(Signal.parse("INT")).contains(Signal.INT);
    assertThat(Signal.parse("sigint")).contains(Signal.INT);
    assertThat(Signal.parse("SIGKILL")).contains(Signal.KILL);
    assertThat(Signal.parse("9")).contains(Signal.KILL);
    assertThat(Signal.parse("28")).contains(Signal.WINCH);
  }

  @Test
  void trailingBytesOrWhitespaceAreRefusedNotStripped() {
    // Probe D16: "SIGKILL " and "KILL\u0000" were accepted as KILL.
    assertThat(Signal.parse("SIGKILL ")).isEmpty();
    assertThat(Signal.parse("KILL\u0000")).isEmpty();
    assertThat(Signal.parse(" 9")).isEmpty();
    assertThat(Signal.parse("SIG")).isEmpty();
    assertThat(Signal.parse("SIG9")).isEmpty();
    assertThat(Signal.parse("")).isEmpty();
    assertThat(Signal.parse("11")).isEmpty();
  }
}
