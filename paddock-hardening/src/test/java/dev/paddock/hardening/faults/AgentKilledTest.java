package dev.paddock.hardening.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.ArchiveInfo;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.cli.AgentProbe;
import dev.paddock.cli.ControlPlane;
import dev.paddock.controlplane.ArchiveSettings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The agent inside a sandbox killed with SIGKILL from outside (a crash, the OOM killer), seen by a
 * user over REST: the control plane says ERROR and how it stopped, keeps the files, resume restarts
 * it on the same workspace with a new key (the old one refused), and a REQUIRED archive before the
 * delete still takes the dead runtime's workspace. The backend's own view of this is proven by
 * ProcessCrashTest and DockerCrashTest through the Java API; this is the REST API over them.
 */
class AgentKilledTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  @RegisterExtension
  final ControlPlane plane =
      ControlPlane.archiving(
          new ArchiveSettings(
              true,
              true,
              ArchiveSettings.TAR_GZ,
              ArchiveSettings.disabled().timeout(),
              ArchiveSettings.disabled().prefix()));

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void aKilledAgentIsReportedResumedOnItsFilesWithANewKeyAndArchivedBeforeItsDelete()
      throws Exception {
    Users bob = Users.create(plane.url(), ControlPlane.ADMIN_KEY, "bob");
    SandboxInfo sandbox = bob.client().create(Optional.empty(), true, TIMEOUT);
    bob.run(sandbox, "printf 'kept\\n' > notes.txt");

    plane.killAgent(sandbox.id());

    SandboxInfo dead = awaitStatus(bob, sandbox.id(), SandboxStatus.ERROR);
    assertThat(dead.statusDetail().orElseThrow())
        .contains("SIGKILL", "workspace is kept")
        .doesNotContain("while starting");
    assertThat(bob.client().list(PageRequest.first(10)).items())
        .singleElement()
        .satisfies(listed -> assertThat(listed.status()).isEqualTo(SandboxStatus.ERROR));
    HttpResponse<String> resumed =
        bob.send("POST", "/api/v1/sandboxes/" + sandbox.id() + "/resume", TIMEOUT);
    assertThat(resumed.statusCode()).as(resumed.body()).isEqualTo(200);

    SandboxInfo back = awaitStatus(bob, sandbox.id(), SandboxStatus.RUNNING);
    assertThat(back.sessionApiKey()).isPresent().isNotEqualTo(sandbox.sessionApiKey());
    int port = URI.create(back.agentServerUrl().orElseThrow()).getPort();
    assertThat(AgentProbe.runsCommandWith(http, port, sandbox.sessionApiKey().orElseThrow()))
        .as("the key from before the kill")
        .isFalse();
    assertThat(bob.run(back, "cat notes.txt")).isEqualTo("kept\n");

    plane.killAgent(sandbox.id());
    awaitStatus(bob, sandbox.id(), SandboxStatus.ERROR);
    HttpResponse<String> deleted = bob.send("DELETE", "/api/v1/sandboxes/" + sandbox.id(), TIMEOUT);

    assertThat(deleted.statusCode()).as(deleted.body()).isEqualTo(200);
    assertThat(bob.client().get(sandbox.id())).isEmpty();
    assertThat(bob.client().archives(sandbox.id()))
        .extracting(ArchiveInfo::format)
        .containsExactly("tar.gz");
  }

  private static SandboxInfo awaitStatus(Users user, String id, SandboxStatus status) {
    return Awaitility.await(id + " " + status)
        .atMost(Duration.ofSeconds(20))
        .until(() -> user.client().get(id).orElseThrow(), s -> s.status() == status);
  }
}
