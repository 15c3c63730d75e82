package dev.paddock.backend.docker;

import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import java.util.List;
import java.util.Optional;

/**
 * The Docker backend's specs: one per configured image ({@code docker.image} first, the default,
 * then {@code docker.images}), its id the image reference, working directory {@code /workspace},
 * environment from {@code docker.spec.env.<NAME>}, limits from the backend's defaults. Pages are
 * slices of the list; a page id is the index of its first spec. Immutable; thread-safe.
 */
final class DockerSpecService implements SandboxSpecService {
  private final List<SandboxSpec> specs;

  DockerSpecService(DockerSettings settings) {
    DockerSettings.Limits limits = settings.resources();
    Resources resources =
        new Resources(limits.cpus(), limits.memoryBytes(), limits.pids(), limits.diskBytes());
    this.specs =
        settings.images().stream()
            .map(
                image ->
                    SandboxSpec.builder(image)
                        .env(settings.specEnv())
                        .workingDir("/workspace")
                        .resources(resources)
                        .build())
            .toList();
  }

  @Override
  public Page<SandboxSpec> search(PageRequest page) {
    int from = page.pageId().map(DockerSpecService::index).orElse(0);
    int to = Math.min(specs.size(), from + page.limit());
    Optional<String> next =
        to < specs.size() ? Optional.of(Integer.toString(to)) : Optional.empty();
    return new Page<>(specs.subList(Math.min(from, to), to), next);
  }

  @Override
  public Optional<SandboxSpec> get(String specId) {
    return specs.stream().filter(s -> s.id().equals(specId)).findFirst();
  }

  @Override
  public SandboxSpec defaultSpec() {
    return specs.get(0);
  }

  private static int index(String pageId) {
    try {
      return Math.max(0, Integer.parseInt(pageId));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("page_id '" + pageId + "' is not a page of specs");
    }
  }
}
