package dev.paddock.cli;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.ExposedUrl;
import dev.paddock.api.QueuePlace;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSettings;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
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
    SandboxSettings settings = s.settings();
    m.put("image", settings.image().orElse(null));
    m.put("labels", settings.labels());
    m.put("resources", resources(settings.resources()));
    m.put("resources_unenforced", s.unenforcedLimits());
    m.put("working_dir", settings.workingDir().orElse(null));
    m.put("timeout_at", s.timeoutAt().map(DateTimeFormatter.ISO_INSTANT::format).orElse(null));
    m.put("idle_timeout", settings.idleTimeout().map(Duration::toSeconds).orElse(null));
    m.put("on_timeout", settings.onTimeout().wireName());
    m.put("on_idle", settings.onIdle().wireName());
    m.put(
        "last_activity_at",
        s.lastActivityAt().map(DateTimeFormatter.ISO_INSTANT::format).orElse(null));
    s.queue()
        .ifPresent(
            q ->
                m.put(
                    "queue",
                    Map.of(
                        "position", q.position(),
                        "length", q.length(),
                        "deadline", DateTimeFormatter.ISO_INSTANT.format(q.deadline()))));
    return m;
  }

  /** "position 2 of 5, expected wait ~40 s, gives up at ..." */
  static String queueText(QueuePlace q) {
    return "position "
        + q.position()
        + " of "
        + q.length()
        + q.expectedWait().map(w -> ", expected wait ~" + w.toSeconds() + " s").orElse("")
        + ", gives up at "
        + DateTimeFormatter.ISO_INSTANT.format(q.deadline());
  }

  static Map<String, Object> resources(Resources r) {
    Map<String, Object> m = new LinkedHashMap<>();
    r.cpus().ifPresent(v -> m.put("cpus", v));
    r.memoryBytes().ifPresent(v -> m.put("memory", v));
    r.pids().ifPresent(v -> m.put("pids", v));
    r.diskBytes().ifPresent(v -> m.put("disk", v));
    return m;
  }

  /** {@code 2} rather than {@code 2.0}; fractions as they are. */
  static String number(double value) {
    return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
  }

  /** Bytes in the largest whole unit: {@code 512m}, {@code 2g}, {@code 1536k}. */
  static String size(long bytes) {
    String[] units = {"t", "g", "m", "k"};
    for (int i = 0; i < units.length; i++) {
      long unit = 1L << (10 * (4 - i));
      if (bytes >= unit && bytes % unit == 0) {
        return bytes / unit + units[i];
      }
    }
    return Long.toString(bytes);
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
    out.printf(
        "%-26s %-9s %-22s %-26s %-30s %s%n",
        "ID", "STATUS", "SPEC", "CREATED", "AGENT URL", "LABELS");
    for (SandboxInfo s : sandboxes) {
      out.printf(
          "%-26s %-9s %-22s %-26s %-30s %s%n",
          s.id(),
          s.status(),
          s.sandboxSpecId(),
          DateTimeFormatter.ISO_INSTANT.format(s.createdAt()),
          s.agentServerUrl().orElse(s.statusDetail().orElse("-")),
          s.settings().labels().isEmpty() ? "-" : pairs(s.settings().labels()));
    }
  }

  private static String pairs(Map<String, String> map) {
    StringBuilder text = new StringBuilder();
    map.forEach((k, v) -> text.append(text.isEmpty() ? "" : " ").append(k).append('=').append(v));
    return text.toString();
  }

  private static String resourceText(Resources r) {
    StringBuilder text = new StringBuilder();
    r.cpus().ifPresent(v -> text.append(" cpus=").append(number(v)));
    r.memoryBytes().ifPresent(v -> text.append(" memory=").append(size(v)));
    r.pids().ifPresent(v -> text.append(" pids=").append(v));
    r.diskBytes().ifPresent(v -> text.append(" disk=").append(size(v)));
    return text.toString().trim();
  }

  static void details(PrintStream out, SandboxInfo s) {
    out.println("id:          " + s.id());
    out.println("status:      " + s.status());
    s.queue().ifPresent(q -> out.println("queue:       " + queueText(q)));
    out.println("spec:        " + s.sandboxSpecId());
    out.println("owner:       " + s.createdByUserId().orElse("-"));
    out.println("created:     " + DateTimeFormatter.ISO_INSTANT.format(s.createdAt()));
    for (ExposedUrl url : s.exposedUrls()) {
      out.println("url:         " + url.name() + " " + url.url());
    }
    SandboxSettings settings = s.settings();
    settings.image().ifPresent(i -> out.println("image:       " + i));
    settings.workingDir().ifPresent(d -> out.println("working dir: " + d));
    if (!settings.labels().isEmpty()) {
      out.println("labels:      " + pairs(settings.labels()));
    }
    Map<String, Object> resources = resources(settings.resources());
    if (!resources.isEmpty()) {
      out.println("resources:   " + resourceText(settings.resources()));
    }
    if (!s.unenforcedLimits().isEmpty()) {
      out.println("unenforced:  " + String.join(", ", s.unenforcedLimits()));
    }
    s.timeoutAt()
        .ifPresent(
            t ->
                out.println(
                    "timeout at:  "
                        + DateTimeFormatter.ISO_INSTANT.format(t)
                        + " (then "
                        + settings.onTimeout().wireName()
                        + ")"));
    settings
        .idleTimeout()
        .ifPresent(
            d ->
                out.println(
                    "idle after:  "
                        + d.toSeconds()
                        + "s (then "
                        + settings.onIdle().wireName()
                        + ")"));
    s.sessionApiKey().ifPresent(k -> out.println("session key: " + k));
    s.statusDetail().ifPresent(d -> out.println("detail:      " + d));
  }
}
