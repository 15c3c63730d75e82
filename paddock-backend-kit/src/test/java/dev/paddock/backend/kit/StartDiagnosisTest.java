package dev.paddock.backend.kit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.spi.RuntimeFailure.Kind;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class StartDiagnosisTest {
  @Test
  void aBindFailureInTheOutputIsAPortClashAndAnythingElseAnExit() {
    assertThat(
            StartDiagnosis.exited(1, List.of("java.net.BindException: Address already in use"))
                .failure()
                .kind())
        .isEqualTo(Kind.PORT_TAKEN);
    assertThat(StartDiagnosis.exited(1, List.of("paddock agent: cannot listen on 127.0.0.1:80")))
        .extracting(e -> e.failure().kind())
        .isEqualTo(Kind.PORT_TAKEN);
    assertThat(StartDiagnosis.exited(3, List.of("boom")).failure().kind()).isEqualTo(Kind.EXITED);
  }

  @Test
  void theDetailNamesTheExitCodeTheSignalAndTheLastLinesButTheSafeMessageDoesNot() {
    var failure = StartDiagnosis.exited(137, List.of("token=RAW at /srv/x")).failure();

    assertThat(failure.rawDetail())
        .contains("exited with code 137 (SIGKILL)")
        .contains("token=RAW at /srv/x");
    assertThat(failure.safeMessage()).isEqualTo(Kind.EXITED.safeMessage());
    assertThat(StartDiagnosis.exitText(3)).isEqualTo("exited with code 3");
    assertThat(StartDiagnosis.exitText(143)).isEqualTo("exited with code 143 (SIGTERM)");
  }

  @Test
  void neverReadySaysHowLongItWaitedAndThatTheAgentWasSilent() {
    var failure = StartDiagnosis.neverReady(Duration.ofSeconds(2), List.of()).failure();

    assertThat(failure.kind()).isEqualTo(Kind.NEVER_READY);
    assertThat(failure.rawDetail()).contains("2000 ms").contains("it printed nothing");
  }
}
