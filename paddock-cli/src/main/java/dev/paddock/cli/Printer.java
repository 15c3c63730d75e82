package dev.paddock.cli;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.ExposedUrl;
import dev.paddock.api.SandboxInfo;
import java.io.IOException;
import java.io.PrintStream;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Readable tables by default, JSON with {@code --json}. */
final class Printer {
  private Printer() {}

  static Map<String, Object> json(SandboxInfo s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", s.id());
    m.put("created_by_user_id", s.createdByUserId().orElse(null));
    m.put("sandbox_spec_id", s.sandboxSpecId());
    m.put("status", s.status().name());
    m.put("session_api_key", s.sessionApiKey().orElse(null));
    m.put(
        "exposed_urls",
        s.exposedUrls().stream()
            .map(u -> Map.<String, Object>of("name", u.name(), "url", u.url(), "port", u.port()))
            .toList());
    m.put("created_at", DateTimeFormatter.ISO_INSTANT.format(s.createdAt()));
    m.put("status_detail", s.statusDetail().orElse(null));
    return m;
  }

  /** One sandbox: JSON with {@code --json}, else the readable details. */
  static void show(Connection connection, SandboxInfo info) {
    if (connection.json) {
      printJson(System.out, json(info));
    } else {
      details(System.out, info);
    }
  }

  static void printJson(PrintStream out, Object value) {
    try {
      out.println(
          JSON.std
              .with(JSON.Feature.PRETTY_PRINT_OUTPUT, JSON.Feature.WRITE_NULL_PROPERTIES)
              .asString(value));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  static void table(PrintStream out, List<SandboxInfo> sandboxes) {
    out.printf("%-26s %-9s %-22s %-26s %s%n", "ID", "STATUS", "SPEC", "CREATED", "AGENT URL");
    for (SandboxInfo s : sandboxes) {
      out.printf(
          "%-26s %-9s %-22s %-26s %s%n",
          s.id(),
          s.status(),
          s.sandboxSpecId(),
          DateTimeFormatter.ISO_INSTANT.format(s.createdAt()),
          s.agentServerUrl().orElse(s.statusDetail().orElse("-")));
    }
  }

  static void details(PrintStream out, SandboxInfo s) {
    out.println("id:          " + s.id());
    out.println("status:      " + s.status());
    out.println("spec:        " + s.sandboxSpecId());
    out.println("owner:       " + s.createdByUserId().orElse("-"));
    out.println("created:     " + DateTimeFormatter.ISO_INSTANT.format(s.createdAt()));
    for (ExposedUrl url : s.exposedUrls()) {
      out.println("url:         " + url.name() + " " + url.url());
    }
    s.sessionApiKey().ifPresent(k -> out.println("session key: " + k));
    s.statusDetail().ifPresent(d -> out.println("detail:      " + d));
  }
}
