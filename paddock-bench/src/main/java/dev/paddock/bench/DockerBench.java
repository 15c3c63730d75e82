package dev.paddock.bench;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.docker.DockerBackendProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The Docker backend bench: sandboxes started on the local Docker Engine through the backend itself
 * (as the control plane does), every figure beside the same operation done with the {@code docker}
 * CLI on the same image in the same run.
 *
 * <pre>
 * java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.DockerBench [--quick] [--json FILE]
 * </pre>
 *
 * Run from inside the checkout, on the engine's host (it reads the containers' cgroups), with the
 * image {@code paddock/sandbox:bookworm} present. Every container uses host networking, so all
 * traffic stays on loopback. Every container it starts is removed on exit, also on failure or
 * Ctrl-C, and the run fails if one of its containers is left. Exit status as {@link AgentBench}.
 */
public final class DockerBench {
  static final String IMAGE = "paddock/sandbox:bookworm";

  /** Label of the baseline containers the bench starts with the CLI or the Engine API. */
  static final String RUN_LABEL = "paddock.bench";

  private DockerBench() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parseOrExit(args, "DockerBench [--quick] [--json FILE]", false);
    Cleanup.around(cleanup -> run(options, cleanup));
  }

  private static void run(BenchOptions options, Cleanup cleanup) throws Exception {
    Checkout checkout = Checkout.find();
    DockerCli cli = new DockerCli();
    String run = "bench-" + HexFormat.of().formatHex(SecureRandom.getSeed(4));
    Path dataDir = checkout.root().resolve("paddock-bench/target/docker-bench");
    String dockerHost = dockerHost();
    System.out.println("paddock docker bench" + (options.quick() ? " (--quick: smoke run)" : ""));
    int foreign = managedContainers(cli).size();
    SandboxBackend backend =
        new DockerBackendProvider().create(settings(checkout, dataDir, dockerHost));
    cleanup.register(backend::close);
    cleanup.register(() -> removeLabelled(cli, run));
    BenchSandboxes sandboxes =
        new BenchSandboxes(
            backend, SandboxSpec.builder(IMAGE).workingDir("/workspace").build(), run, cleanup);
    cleanup.register(() -> sandboxes.left().forEach(backend::destroy));
    Path bundle = newestBundle(dataDir.resolve("runtime"));
    Report report =
        new Report(context(checkout, cli, options.quick(), bundle, dockerHost, run, foreign));
    DockerFigures.Plan plan =
        options.quick() ? DockerFigures.Plan.smokeRun() : DockerFigures.Plan.fullRun();
    try (EngineSocket engine = EngineSocket.open(unixSocket(dockerHost))) {
      new DockerFigures(sandboxes, cli, engine, run, plan, report).measureAll();
    }
    new AgentStartFigures(bundleCheckout(checkout, bundle), cleanup, plan, report).measureAll();
    requireNothingLeft(cli, sandboxes, run);
    System.out.println();
    report.print(System.out);
    if (options.json().isPresent()) {
      report.writeJson(options.json().get());
      System.out.println("figures written to " + options.json().get());
    }
  }

  private static Map<String, String> settings(Checkout checkout, Path dataDir, String dockerHost) {
    Map<String, String> settings = new HashMap<>();
    settings.put("paddock.home", checkout.root().toString());
    settings.put("paddock.data-dir", dataDir.toString());
    settings.put("docker.host", dockerHost);
    // Loopback only: the agent binds 127.0.0.1 in the host's network namespace.
    settings.put("docker.network", "host");
    settings.put("docker.pull", "never");
    settings.put("docker.image", IMAGE);
    return settings;
  }

  private static String dockerHost() {
    return Optional.ofNullable(System.getenv("DOCKER_HOST"))
        .filter(s -> !s.isBlank())
        .orElse("unix:///var/run/docker.sock");
  }

  private static Path unixSocket(String dockerHost) {
    if (!dockerHost.startsWith("unix://")) {
      throw new IllegalStateException(
          "DOCKER_HOST=" + dockerHost + ": the bench needs the local engine's unix socket");
    }
    return Path.of(dockerHost.substring("unix://".length()));
  }

  /** The runtime bundle the provider just built or found: the newest complete one. */
  private static Path newestBundle(Path cache) throws IOException {
    try (Stream<Path> dirs = Files.list(cache)) {
      return dirs.filter(d -> Files.isRegularFile(d.resolve(".complete")))
          .max(Comparator.comparingLong(DockerBench::modified))
          .orElseThrow(() -> new IllegalStateException("no runtime bundle under " + cache));
    }
  }

  private static long modified(Path bundle) {
    try {
      return Files.getLastModifiedTime(bundle.resolve(".complete")).toMillis();
    } catch (IOException e) {
      return 0;
    }
  }

  /** The bundle's JRE, jar and options, as a checkout: the sandboxes' agent, run on the host. */
  private static Checkout bundleCheckout(Checkout checkout, Path bundle) {
    return new Checkout(
        checkout.root(),
        bundle.resolve("jre/bin/java"),
        bundle.resolve("agent/paddock-agent.jar"),
        bundle.resolve("agent-jvm.options"),
        java.nio.file.Files.isRegularFile(bundle.resolve("agent.aot"))
            ? Optional.of(bundle.resolve("agent.aot"))
            : Optional.empty());
  }

  private static List<String> managedContainers(DockerCli cli) throws Exception {
    return cli.lines("ps", "-aq", "--no-trunc", "--filter", "label=paddock.managed=true");
  }

  private static void removeLabelled(DockerCli cli, String run) throws Exception {
    List<String> ids = cli.lines("ps", "-aq", "--filter", "label=" + RUN_LABEL + "=" + run);
    if (!ids.isEmpty()) {
      cli.run(Stream.concat(Stream.of("rm", "-f"), ids.stream()).toArray(String[]::new));
    }
  }

  /** Fails when a container of this run still exists once every figure is done. */
  private static void requireNothingLeft(DockerCli cli, BenchSandboxes sandboxes, String run)
      throws Exception {
    List<String> left =
        Stream.concat(
                sandboxes.left().stream().map(h -> h.attributes().get("container")),
                cli.lines("ps", "-aq", "--filter", "label=" + RUN_LABEL + "=" + run).stream())
            .toList();
    if (!left.isEmpty()) {
      throw new IllegalStateException("containers of this run left behind: " + left);
    }
    System.out.println("containers left by this run: none");
  }

  private static Map<String, String> context(
      Checkout checkout,
      DockerCli cli,
      boolean quick,
      Path bundle,
      String dockerHost,
      String run,
      int foreign)
      throws Exception {
    Map<String, String> context = new LinkedHashMap<>();
    context.put("jdk", System.getProperty("java.vm.name") + " " + Runtime.version());
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    context.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
    context.put(
        "engine",
        "Docker "
            + cli.run("version", "--format", "{{.Server.Version}}")
            + ", cgroup v"
            + cli.run("info", "--format", "{{.CgroupVersion}}")
            + " ("
            + cli.run("info", "--format", "{{.CgroupDriver}}")
            + "), "
            + dockerHost);
    context.put("image", IMAGE + ", host network, sandboxes with the backend's default limits");
    context.put(
        "bundle",
        checkout.root().relativize(bundle)
            + (java.nio.file.Files.isRegularFile(bundle.resolve("agent.aot"))
                ? " (jlink'd JRE + AOT cache)"
                : " (jlink'd JRE, no AOT cache)"));
    context.put(
        "others",
        foreign
            + " managed container(s) of someone else at start (left alone); "
            + cli.lines("ps", "-q").size()
            + " running");
    context.put("run", (quick ? "quick (smoke; do not publish)" : "full") + ", id " + run);
    return context;
  }
}
