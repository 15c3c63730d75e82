package dev.paddock.cli;

import dev.paddock.api.LifetimeAction;
import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxFilter;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.api.settings.Setting;
import dev.paddock.client.PaddockClient;
import dev.paddock.client.PaddockClientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code paddock sandbox create|list|get|pause|resume|delete|top|logs}. */
@Command(
    name = "sandbox",
    mixinStandardHelpOptions = true,
    description = "Create, list, inspect, pause, resume and delete sandboxes.",
    subcommands = {
      SandboxCommands.Create.class,
      SandboxCommands.ListAll.class,
      SandboxCommands.Get.class,
      SandboxCommands.Pause.class,
      SandboxCommands.Resume.class,
      SandboxCommands.Delete.class,
      UsageCommands.Top.class,
      UsageCommands.Logs.class,
    })
final class SandboxCommands {
  private SandboxCommands() {}

  @Command(
      mixinStandardHelpOptions = true,
      name = "create",
      description = {
        "Create a sandbox and wait until it runs.",
        "Durations: 30 (seconds), 30s, 10m, 1h; sizes: 512m, 2g."
      })
  static final class Create implements Callable<Integer> {
    @Mixin Connection connection;

    @CommandLine.Spec CommandLine.Model.CommandSpec command;

    @Option(names = "--spec", description = "sandbox spec id (default: the server's default)")
    String spec;

    @Option(
        names = "--image",
        description = "image to run (image-based backends; PADDOCK_ALLOWED_IMAGES allows it)")
    String image;

    @Option(
        names = "--env",
        paramLabel = "NAME=VALUE",
        description = "environment variable for the sandbox (repeatable)")
    Map<String, String> env = new LinkedHashMap<>();

    @Option(names = "--label", paramLabel = "KEY=VALUE", description = "label (repeatable)")
    Map<String, String> labels = new LinkedHashMap<>();

    @Option(names = "--cpus", description = "CPUs (fractions allowed, e.g. 1.5)")
    Double cpus;

    @Option(names = "--memory", paramLabel = "SIZE", description = "memory limit, e.g. 512m")
    String memory;

    @Option(names = "--pids", description = "most processes and threads at once")
    Integer pids;

    @Option(names = "--disk", paramLabel = "SIZE", description = "disk limit, e.g. 10g")
    String disk;

    @Option(names = "--working-dir", paramLabel = "DIR", description = "the workspace directory")
    String workingDir;

    @Option(
        names = "--timeout",
        paramLabel = "DURATION",
        description = "longest life (default: the server's PADDOCK_DEFAULT_TIMEOUT)")
    String timeout;

    @Option(
        names = "--idle-timeout",
        paramLabel = "DURATION",
        description = "idle this long (no command, stream or request) and --on-idle happens")
    String idleTimeout;

    @Option(
        names = "--on-timeout",
        paramLabel = "pause|delete",
        description = "at the timeout (default delete)")
    String onTimeout;

    @Option(
        names = "--on-idle",
        paramLabel = "pause|delete",
        description = "when idle (default pause)")
    String onIdle;

    @Option(names = "--no-wait", description = "return at once (STARTING) instead of waiting")
    boolean noWait;

    @Option(
        names = "--wait-timeout",
        paramLabel = "SECONDS",
        description = "seconds to wait for RUNNING (default 120)")
    int waitTimeout = 120;

    @Option(
        names = "--queue-timeout",
        paramLabel = "DURATION",
        description =
            "at capacity, wait this long in the server's start queue for a slot (e.g. 300 or 5m)"
                + " instead of failing at once")
    String queueTimeout;

    @Override
    public Integer call() {
      StartRequest request = request();
      if (!noWait && !connection.json) {
        System.err.println(
            queueTimeout == null
                ? "creating sandbox, waiting until it runs..."
                : "creating sandbox (waiting in the start queue if at capacity)...");
      }
      SandboxInfo info =
          connection.client().create(request, !noWait, Duration.ofSeconds(waitTimeout));
      Printer.show(connection, info);
      return 0;
    }

    private StartRequest request() {
      StartRequest.Builder request = StartRequest.builder().env(env).labels(labels);
      Optional.ofNullable(spec).ifPresent(request::specId);
      Optional.ofNullable(image).ifPresent(request::image);
      Optional.ofNullable(workingDir).ifPresent(request::workingDir);
      request.resources(
          new Resources(
              cpus == null ? OptionalDouble.empty() : OptionalDouble.of(cpus),
              size("--memory", memory),
              pids == null ? OptionalInt.empty() : OptionalInt.of(pids),
              size("--disk", disk)));
      duration("--timeout", timeout).ifPresent(request::timeout);
      duration("--idle-timeout", idleTimeout).ifPresent(request::idleTimeout);
      action("--on-timeout", onTimeout).ifPresent(request::onTimeout);
      action("--on-idle", onIdle).ifPresent(request::onIdle);
      duration("--queue-timeout", queueTimeout).ifPresent(request::queueTimeout);
      return request.build();
    }

    private OptionalLong size(String flag, String text) {
      return text == null
          ? OptionalLong.empty()
          : OptionalLong.of(parsed(flag, text, Setting.size(flag, flag)));
    }

    private Optional<Duration> duration(String flag, String text) {
      return Optional.ofNullable(text).map(t -> parsed(flag, t, Setting.duration(flag, flag)));
    }

    private static Optional<LifetimeAction> action(String flag, String text) {
      return Optional.ofNullable(text).map(t -> LifetimeAction.fromWire(flag, t));
    }

    private <T> T parsed(String flag, String text, Setting<T> setting) {
      try {
        return setting.parse(text);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(
            command.commandLine(), flag + " '" + text + "': expected " + e.getMessage());
      }
    }
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "list",
      description = "List your sandboxes (all of them for an admin), newest first.")
  static final class ListAll implements Callable<Integer> {
    @Mixin Connection connection;

    @Option(
        names = "--status",
        paramLabel = "STATUS",
        split = ",",
        description =
            "only these statuses (repeatable or comma-separated): ${COMPLETION-CANDIDATES}")
    Set<SandboxStatus> statuses = EnumSet.noneOf(SandboxStatus.class);

    @Option(
        names = "--label",
        paramLabel = "KEY=VALUE",
        description = "only sandboxes with this label (repeatable: all must match)")
    Map<String, String> labels = new LinkedHashMap<>();

    @Option(names = "--spec", description = "only sandboxes of this spec")
    String spec;

    @Override
    public Integer call() {
      PaddockClient client = connection.client();
      SandboxFilter filter = new SandboxFilter(statuses, labels, Optional.ofNullable(spec));
      List<SandboxInfo> all = new ArrayList<>();
      Optional<String> pageId = Optional.empty();
      do {
        Page<SandboxInfo> page =
            client.list(filter, new PageRequest(pageId, PageRequest.MAX_LIMIT));
        all.addAll(page.items());
        pageId = page.nextPageId();
      } while (pageId.isPresent());
      if (connection.json) {
        Printer.printJson(System.out, all.stream().map(Printer::json).toList());
      } else {
        Printer.table(System.out, all);
      }
      return 0;
    }
  }

  @Command(mixinStandardHelpOptions = true, name = "get", description = "Show one sandbox.")
  static final class Get implements Callable<Integer> {
    @Mixin Connection connection;

    @Parameters(paramLabel = "ID")
    String id;

    @Override
    public Integer call() {
      SandboxInfo info =
          connection
              .client()
              .get(id)
              .orElseThrow(() -> new PaddockClientException(404, "no sandbox " + id));
      Printer.show(connection, info);
      return 0;
    }
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "pause",
      description = "Freeze every process of a sandbox; revokes its key.")
  static final class Pause implements Callable<Integer> {
    @Mixin Connection connection;

    @Parameters(paramLabel = "ID")
    String id;

    @Override
    public Integer call() {
      connection.client().pause(id);
      System.out.println(connection.json ? "{\"success\": true}" : "paused " + id);
      return 0;
    }
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "resume",
      description = "Thaw a sandbox; prints its new session key.")
  static final class Resume implements Callable<Integer> {
    @Mixin Connection connection;

    @Parameters(paramLabel = "ID")
    String id;

    @Override
    public Integer call() {
      SandboxInfo info = connection.client().resume(id);
      Printer.show(connection, info);
      return 0;
    }
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "delete",
      description = "Delete a sandbox and its workspace.")
  static final class Delete implements Callable<Integer> {
    @Mixin Connection connection;

    @Parameters(paramLabel = "ID")
    String id;

    @Override
    public Integer call() {
      connection.client().delete(id);
      System.out.println(connection.json ? "{\"success\": true}" : "deleted " + id);
      return 0;
    }
  }
}
