package dev.paddock.backend.ssh;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.api.spi.SandboxBackendProvider;
import dev.paddock.api.spi.SpecList;
import java.util.List;
import java.util.Map;

/**
 * The {@code ssh} backend: sandboxes on already-configured machines (a GPU box, a build server)
 * reached with the OpenSSH client. Each sandbox is a directory and an agent-server process on one
 * of the hosts (its own cgroup where the host lets the login create one), reached only through an
 * SSH port forward. Commands run as the SSH login user on the host: use a dedicated account.
 *
 * <p>Settings ({@code ssh.*}, or {@code PADDOCK_SSH_*}): {@code ssh.hosts} ({@code
 * [user@]host[:port]}, comma-separated), {@code ssh.key-file}, {@code ssh.known-hosts} (all three
 * required; host keys are checked strictly against that file only), {@code ssh.remote-dir} ({@code
 * .paddock-ssh} under the login's home), {@code ssh.connect-timeout} (10 s), {@code
 * ssh.ready-timeout} (60 s), {@code ssh.stop-grace} (5 s), {@code ssh.min-free-disk} (256 MiB),
 * {@code ssh.binary}, {@code ssh.spec.id}, {@code ssh.spec.env.<NAME>}, {@code ssh.memory}, {@code
 * ssh.cpus}, {@code ssh.pids-limit}. See {@code docs/REMOTE.md}.
 */
public final class SshBackendProvider implements SandboxBackendProvider {
  /** For {@link java.util.ServiceLoader}. */
  public SshBackendProvider() {}

  @Override
  public List<String> names() {
    return List.of(SshBackend.NAME);
  }

  @Override
  public List<Setting<?>> settings() {
    List<Setting<?>> all = new java.util.ArrayList<>(SshSettings.DECLARED);
    all.add(dev.paddock.backend.kit.AgentDistribution.AGENT_JAR);
    return all;
  }

  /**
   * @throws IllegalArgumentException naming the setting that is missing or malformed
   */
  @Override
  public SandboxBackend create(Map<String, String> settings) {
    return SshBackend.create(SshSettings.from(settings));
  }

  @Override
  public SandboxSpecService specs(Map<String, String> settings) {
    SshSettings s = SshSettings.from(settings);
    return SpecList.of(
        List.of(
            SandboxSpec.builder(s.specId()).env(s.specEnv()).resources(s.specResources()).build()));
  }
}
