package dev.paddock.store;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.LifetimeAction;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSettings;
import java.io.IOException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * The columns of {@link SandboxSettings} and the lifetime in the {@code sandboxes} table (V2, V6):
 * labels and resources as JSON objects, public ports as a JSON array, durations and times as
 * milliseconds, actions by wire name, auto-resume as 0 or 1; and the operation under way with its
 * replica (V4).
 */
final class SettingsColumns {
  static final String NAMES =
      "image, labels, resources, working_dir, timeout_ms, idle_timeout_ms, on_timeout, on_idle,"
          + " timeout_at, last_activity_at, key_generation, operation, operation_replica,"
          + " auto_resume, public_ports";
  static final int COUNT = 15;

  private SettingsColumns() {}

  /** Binds the {@link #COUNT} columns in {@link #NAMES} order, starting at {@code first}. */
  static void bind(PreparedStatement statement, int first, SandboxRecord record)
      throws SQLException {
    SandboxSettings s = record.settings();
    setText(statement, first, s.image());
    setText(statement, first + 1, Optional.of(json(s.labels())));
    setText(statement, first + 2, Optional.of(json(resources(s.resources()))));
    setText(statement, first + 3, s.workingDir());
    setLong(statement, first + 4, s.timeout().map(Duration::toMillis));
    setLong(statement, first + 5, s.idleTimeout().map(Duration::toMillis));
    statement.setString(first + 6, s.onTimeout().wireName());
    statement.setString(first + 7, s.onIdle().wireName());
    setLong(statement, first + 8, record.timeoutAt().map(Instant::toEpochMilli));
    setLong(statement, first + 9, record.lastActivityAt().map(Instant::toEpochMilli));
    statement.setLong(first + 10, record.keyGeneration());
    setText(statement, first + 11, record.operation().map(o -> o.kind().name()));
    setText(statement, first + 12, record.operation().map(SandboxOperation::replicaId));
    statement.setLong(first + 13, s.autoResume() ? 1 : 0);
    setText(statement, first + 14, Optional.of(json(s.publicPorts())));
  }

  static Optional<SandboxOperation> operation(ResultSet row) throws SQLException {
    String kind = row.getString("operation");
    String replica = row.getString("operation_replica");
    if (kind == null || replica == null) {
      return Optional.empty();
    }
    return Optional.of(new SandboxOperation(SandboxOperation.Kind.valueOf(kind), replica));
  }

  static SandboxSettings settings(ResultSet row) throws SQLException {
    return new SandboxSettings(
        Optional.ofNullable(row.getString("image")),
        labels(row.getString("labels")),
        resources(row.getString("resources")),
        Optional.ofNullable(row.getString("working_dir")),
        millis(row, "timeout_ms").map(Duration::ofMillis),
        millis(row, "idle_timeout_ms").map(Duration::ofMillis),
        LifetimeAction.fromWire("on_timeout", row.getString("on_timeout")),
        LifetimeAction.fromWire("on_idle", row.getString("on_idle")),
        row.getLong("auto_resume") != 0,
        ports(row.getString("public_ports")));
  }

  private static java.util.Set<Integer> ports(String json) {
    java.util.Set<Integer> ports = new java.util.TreeSet<>();
    if (json != null) {
      try {
        for (Object port : JSON.std.listFrom(json)) {
          if (port instanceof Number n) {
            ports.add(n.intValue());
          }
        }
      } catch (IOException e) {
        throw new StoreException(
            "Stored public ports are not a JSON array (" + e.getMessage() + ")", e);
      }
    }
    return ports;
  }

  static Optional<Instant> instant(ResultSet row, String column) throws SQLException {
    return millis(row, column).map(Instant::ofEpochMilli);
  }

  private static Optional<Long> millis(ResultSet row, String column) throws SQLException {
    long value = row.getLong(column);
    return row.wasNull() ? Optional.empty() : Optional.of(value);
  }

  private static Map<String, String> labels(String json) {
    Map<String, String> labels = new TreeMap<>();
    if (json != null) {
      parse(json).forEach((k, v) -> labels.put(k, String.valueOf(v)));
    }
    return labels;
  }

  private static Map<String, Object> resources(Resources r) {
    Map<String, Object> m = new LinkedHashMap<>();
    r.cpus().ifPresent(v -> m.put("cpus", v));
    r.memoryBytes().ifPresent(v -> m.put("memory_bytes", v));
    r.pids().ifPresent(v -> m.put("pids", v));
    r.diskBytes().ifPresent(v -> m.put("disk_bytes", v));
    return m;
  }

  private static Resources resources(String json) {
    if (json == null) {
      return Resources.NONE;
    }
    Map<String, Object> m = parse(json);
    return new Resources(
        m.get("cpus") instanceof Number n
            ? OptionalDouble.of(n.doubleValue())
            : OptionalDouble.empty(),
        m.get("memory_bytes") instanceof Number n
            ? OptionalLong.of(n.longValue())
            : OptionalLong.empty(),
        m.get("pids") instanceof Number n ? OptionalInt.of(n.intValue()) : OptionalInt.empty(),
        m.get("disk_bytes") instanceof Number n
            ? OptionalLong.of(n.longValue())
            : OptionalLong.empty());
  }

  private static String json(Object value) {
    try {
      return JSON.std.asString(value);
    } catch (IOException e) {
      throw new StoreException("Could not write sandbox settings as JSON: " + e.getMessage(), e);
    }
  }

  private static Map<String, Object> parse(String json) {
    try {
      return JSON.std.mapFrom(json);
    } catch (IOException e) {
      throw new StoreException(
          "Stored sandbox settings are not JSON ("
              + e.getMessage()
              + "); the row was changed"
              + " outside Paddock",
          e);
    }
  }

  private static void setText(PreparedStatement statement, int index, Optional<String> value)
      throws SQLException {
    if (value.isPresent()) {
      statement.setString(index, value.get());
    } else {
      statement.setNull(index, Types.VARCHAR);
    }
  }

  private static void setLong(PreparedStatement statement, int index, Optional<Long> value)
      throws SQLException {
    if (value.isPresent()) {
      statement.setLong(index, value.get());
    } else {
      statement.setNull(index, Types.BIGINT);
    }
  }
}
