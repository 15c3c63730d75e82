package dev.paddock.cli;

import dev.paddock.client.PaddockClient;
import dev.paddock.client.PaddockClientException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code paddock user create|list|revoke} (admin). */
@Command(
    name = "user",
    mixinStandardHelpOptions = true,
    description = "Manage users and their API keys (admin).",
    subcommands = {
      UserCommands.Create.class,
      UserCommands.ListAll.class,
      UserCommands.Revoke.class
    })
final class UserCommands {
  private UserCommands() {}

  @Command(
      mixinStandardHelpOptions = true,
      name = "create",
      description = "Create a user; prints its API key once.")
  static final class Create implements Callable<Integer> {
    @Mixin Connection connection;

    @Option(names = "--admin", description = "the user may see and manage everything")
    boolean admin;

    @Parameters(paramLabel = "NAME")
    String name;

    @Override
    public Integer call() {
      PaddockClient.NewUser created = connection.client().createUser(name, admin);
      if (connection.json) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", created.user().id());
        m.put("name", created.user().name());
        m.put("admin", created.user().admin());
        m.put("api_key_id", created.apiKeyId());
        m.put("api_key", created.apiKey());
        Printer.printJson(System.out, m);
      } else {
        System.out.println(
            "created user " + created.user().name() + " (" + created.user().id() + ")");
        System.out.println("API key (shown once, store it now): " + created.apiKey());
      }
      return 0;
    }
  }

  @Command(mixinStandardHelpOptions = true, name = "list", description = "List users.")
  static final class ListAll implements Callable<Integer> {
    @Mixin Connection connection;

    @Override
    public Integer call() {
      var users = connection.client().users();
      if (connection.json) {
        Printer.printJson(
            System.out,
            users.stream()
                .map(
                    u ->
                        Map.<String, Object>of(
                            "id",
                            u.id(),
                            "name",
                            u.name(),
                            "admin",
                            u.admin(),
                            "created_at",
                            u.createdAt().toString()))
                .toList());
      } else {
        System.out.printf("%-26s %-24s %-6s %s%n", "ID", "NAME", "ADMIN", "CREATED");
        users.forEach(
            u ->
                System.out.printf(
                    "%-26s %-24s %-6s %s%n", u.id(), u.name(), u.admin(), u.createdAt()));
      }
      return 0;
    }
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "revoke",
      description = "Revoke every API key of a user (by name or id).")
  static final class Revoke implements Callable<Integer> {
    @Mixin Connection connection;

    @Parameters(paramLabel = "NAME_OR_ID")
    String who;

    @Override
    public Integer call() {
      PaddockClient client = connection.client();
      var user =
          client.users().stream()
              .filter(u -> u.id().equals(who) || u.name().equals(who))
              .findFirst()
              .orElseThrow(() -> new PaddockClientException(404, "no user " + who));
      int revoked = client.revokeUser(user.id());
      System.out.println(
          connection.json
              ? "{\"revoked_keys\": " + revoked + "}"
              : "revoked " + revoked + " key(s) of " + user.name());
      return 0;
    }
  }
}
