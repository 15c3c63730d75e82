package dev.paddock.agent.user;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@code --run-as} and {@code --home} turn into, and the start-up errors. */
class CommandUserTest {
  private static final Optional<Path> SETPRIV = Optional.of(Path.of("/usr/bin/setpriv"));

  @TempDir Path workspace;

  @Test
  void parsesUidColonGid() {
    assertThat(RunAs.parse("65534:65534")).isEqualTo(new RunAs(65534, 65534));
    assertThat(RunAs.parse("1000:100").toString()).isEqualTo("1000:100");
    for (String bad :
        List.of("nobody", "1000", "1000:", ":1000", "-1:0", "1:2:3", "99999999999:0")) {
      assertThatThrownBy(() -> RunAs.parse(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("--run-as");
    }
  }

  @Test
  void readsTheEffectiveIdsFromProcStatus() {
    String status = "Name:\tjava\nUid:\t1000\t1001\t1001\t1001\nGid:\t50\t51\t51\t51\n";

    assertThat(ProcessIds.parseStatus(status)).isEqualTo(new ProcessIds(1001, 51));
  }

  @Test
  void asRootCommandsAreWrappedInSetprivDroppingGroupsAndCapabilities() {
    assumeRoot();
    CommandUser user =
        CommandUser.prepare(
            Optional.of(new RunAs(65534, 65534)),
            Optional.empty(),
            workspace,
            new ProcessIds(0, 0),
            SETPRIV);

    assertThat(user.wrap(List.of("bash", "-c", "id")))
        .containsExactly(
            "/usr/bin/setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--",
            "bash",
            "-c",
            "id");
    assertThat(user.environment(Map.of("HOME", "/root", "PATH", "/bin")))
        .containsEntry("HOME", workspace.toString())
        .containsEntry("PATH", "/bin");
  }

  @Test
  void asRootTheWorkspaceAndANewHomeAreHandedToTheUser() throws Exception {
    assumeRoot();
    Path home = workspace.resolve("homes/paddock");

    CommandUser.prepare(
        Optional.of(new RunAs(65534, 65534)),
        Optional.of(home),
        workspace,
        new ProcessIds(0, 0),
        SETPRIV);

    assertThat(Files.getAttribute(workspace, "unix:uid")).isEqualTo(65534);
    assertThat(Files.getAttribute(home, "unix:uid")).isEqualTo(65534);
    assertThat(Files.getAttribute(home, "unix:gid")).isEqualTo(65534);
    // Only the top directory: what the agent made on the way is not the user's.
    assertThat(Files.getAttribute(home.getParent(), "unix:uid")).isEqualTo(0);
  }

  @Test
  void withoutSetprivTheStartFailsNamingIt() {
    assertThatThrownBy(
            () ->
                CommandUser.prepare(
                    Optional.of(new RunAs(65534, 65534)),
                    Optional.empty(),
                    workspace,
                    new ProcessIds(0, 0),
                    Optional.empty()))
        .isInstanceOf(CommandUserException.class)
        .hasMessageContaining("setpriv")
        .hasMessageContaining("util-linux");
  }

  @Test
  void aNonRootAgentMaySwitchOnlyToItself() {
    CommandUser same =
        CommandUser.prepare(
            Optional.of(new RunAs(1000, 1000)),
            Optional.empty(),
            workspace,
            new ProcessIds(1000, 1000),
            Optional.empty());
    assertThat(same.switchTo()).isEmpty();
    assertThat(same.wrap(List.of("bash"))).containsExactly("bash");

    assertThatThrownBy(
            () ->
                CommandUser.prepare(
                    Optional.of(new RunAs(65534, 65534)),
                    Optional.empty(),
                    workspace,
                    new ProcessIds(1000, 1000),
                    SETPRIV))
        .isInstanceOf(CommandUserException.class)
        .hasMessageContaining("needs the agent to run as root")
        .hasMessageContaining("uid 1000");
  }

  @Test
  void withoutRunAsNothingIsWrappedAndHomeIsOnlySetWhenGiven() throws Exception {
    Path home = workspace.resolve("home");
    CommandUser plain =
        CommandUser.prepare(
            Optional.empty(), Optional.empty(), workspace, new ProcessIds(0, 0), SETPRIV);
    CommandUser withHome =
        CommandUser.prepare(
            Optional.empty(), Optional.of(home), workspace, new ProcessIds(0, 0), SETPRIV);

    assertThat(plain.wrap(List.of("git"))).containsExactly("git");
    assertThat(plain.environment(Map.of("HOME", "/root"))).containsEntry("HOME", "/root");
    assertThat(withHome.environment(Map.of("HOME", "/root")))
        .containsEntry("HOME", home.toString());
    assertThat(home).isDirectory();
  }

  private static void assumeRoot() {
    assumeThat(System.getProperty("user.name")).as("chown needs root").isEqualTo("root");
  }
}
