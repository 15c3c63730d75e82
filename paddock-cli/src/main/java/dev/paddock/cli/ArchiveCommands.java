package dev.paddock.cli;

import dev.paddock.api.ArchiveInfo;
import dev.paddock.client.PaddockClientException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code paddock archive list|get}: a sandbox's workspace archives, also after it is gone. */
@Command(
    name = "archive",
    mixinStandardHelpOptions = true,
    description = "List and download a sandbox's workspace archives.",
    subcommands = {ArchiveCommands.ListAll.class, ArchiveCommands.Get.class})
final class ArchiveCommands {
  private ArchiveCommands() {}

  @Command(
      mixinStandardHelpOptions = true,
      name = "list",
      description = "List a sandbox's archives.")
  static final class ListAll implements Callable<Integer> {
    @Mixin Connection connection;

    @Parameters(paramLabel = "SANDBOX")
    String sandbox;

    @Override
    public Integer call() {
      List<ArchiveInfo> archives = connection.client().archives(sandbox);
      if (connection.json) {
        Printer.printJson(
            System.out,
            archives.stream()
                .map(
                    a ->
                        Map.<String, Object>of(
                            "name", a.name(),
                            "format", a.format(),
                            "byte_count", a.byteCount(),
                            "sha256", a.sha256(),
                            "created_at", a.createdAt().toString()))
                .toList());
        return 0;
      }
      System.out.printf("%-62s %-9s %12s %s%n", "NAME", "FORMAT", "BYTES", "CREATED");
      archives.forEach(
          a ->
              System.out.printf(
                  "%-62s %-9s %12d %s%n", a.name(), a.format(), a.byteCount(), a.createdAt()));
      return 0;
    }
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "get",
      description = "Download an archive (the newest when NAME is left out).")
  static final class Get implements Callable<Integer> {
    @Mixin Connection connection;

    @Parameters(index = "0", paramLabel = "SANDBOX")
    String sandbox;

    @Parameters(index = "1", arity = "0..1", paramLabel = "NAME")
    String name;

    @Option(
        names = {"-o", "--output"},
        description = "file to write (default: the archive's file name)")
    Path output;

    @Override
    public Integer call() {
      var client = connection.client();
      String chosen = name;
      if (chosen == null) {
        chosen =
            client.archives(sandbox).stream()
                .max(java.util.Comparator.comparing(ArchiveInfo::createdAt))
                .map(ArchiveInfo::name)
                .orElseThrow(
                    () -> new PaddockClientException(404, "no archives of sandbox " + sandbox));
      }
      Path target =
          output != null ? output : Path.of(chosen.substring(chosen.lastIndexOf('/') + 1));
      client.downloadArchive(sandbox, chosen, target);
      System.err.println("wrote " + target);
      return 0;
    }
  }
}
