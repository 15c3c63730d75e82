package dev.paddock.cli;

import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.client.PaddockClient;
import dev.paddock.client.PaddockClientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code paddock sandbox create|list|get|pause|resume|delete}. */
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
    })
final class SandboxCommands {
  private SandboxCommands() {}

  @Command(
      mixinStandardHelpOptions = true,
      name = "create",
      description = "Create a sandbox and wait until it runs.")
  static final class Create implements Callable<Integer> {
    @Mixin Connection connection;

    @Option(names = "--spec", description = "sandbox spec id (default: the server's default)")
    String spec;

    @Option(names = "--no-wait", description = "return at once (STARTING) instead of waiting")
    boolean noWait;

    @Option(names = "--timeout", description = "seconds to wait for RUNNING (default 120)")
    int timeout = 120;

    @Override
    public Integer call() {
      if (!noWait && !connection.json) {
        System.err.println("creating sandbox, waiting until it runs...");
      }
      SandboxInfo info =
          connection
              .client()
              .create(Optional.ofNullable(spec), !noWait, Duration.ofSeconds(timeout));
      Printer.show(connection, info);
      return 0;
    }
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "list",
      description = "List your sandboxes (all of them for an admin).")
  static final class ListAll implements Callable<Integer> {
    @Mixin Connection connection;

    @Override
    public Integer call() {
      PaddockClient client = connection.client();
      List<SandboxInfo> all = new ArrayList<>();
      Optional<String> pageId = Optional.empty();
      do {
        Page<SandboxInfo> page = client.list(new PageRequest(pageId, PageRequest.MAX_LIMIT));
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
