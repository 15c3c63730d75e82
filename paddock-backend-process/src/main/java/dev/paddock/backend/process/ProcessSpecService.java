package dev.paddock.backend.process;

import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import java.util.List;
import java.util.Optional;

/**
 * The process backend's one spec, from settings: id {@code process.spec.id} (default {@code
 * process-default}), an empty command (the backend's agent command), environment from {@code
 * process.spec.env.<NAME>}, limits from {@code process.memory}, {@code process.cpus} and {@code
 * process.pids-limit} (none by default), default lifetimes from {@code process.spec.timeout} and
 * {@code process.spec.idle-timeout}, and working directory {@code "."}, meaning the sandbox's own
 * directory (its workspace is {@code workspace/} in it). Immutable; thread-safe.
 */
final class ProcessSpecService implements SandboxSpecService {
  private final SandboxSpec spec;

  ProcessSpecService(ProcessSettings settings) {
    SandboxSpec.Builder builder =
        SandboxSpec.builder(settings.specId())
            .command(List.of())
            .env(settings.specEnv())
            .workingDir(".")
            .resources(settings.specResources());
    settings.specTimeout().ifPresent(builder::timeout);
    settings.specIdleTimeout().ifPresent(builder::idleTimeout);
    this.spec = builder.build();
  }

  @Override
  public Page<SandboxSpec> search(PageRequest page) {
    // One spec: the first page holds it, any later page is empty.
    return new Page<>(page.pageId().isEmpty() ? List.of(spec) : List.of(), Optional.empty());
  }

  @Override
  public Optional<SandboxSpec> get(String specId) {
    return spec.id().equals(specId) ? Optional.of(spec) : Optional.empty();
  }

  @Override
  public SandboxSpec defaultSpec() {
    return spec;
  }
}
