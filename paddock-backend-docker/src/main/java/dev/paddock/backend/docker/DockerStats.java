package dev.paddock.backend.docker;

import dev.paddock.api.spi.RuntimeStats;
import dev.paddock.backend.docker.DockerEngine.EngineException;
import dev.paddock.backend.docker.DockerEngine.Response;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A container's resource use from the engine's stats endpoint, one-shot ({@code stream=false}
 * {@code one-shot=true}: one reading, no second sample the engine would wait a second for). CPU is
 * the cgroup's total usage; memory the usage and, on cgroup v1, its peak; network bytes summed over
 * the container's own interfaces (none with host networking). The workspace volume's size is not
 * read: the engine only reports it through a system-wide scan.
 */
final class DockerStats {
  private DockerStats() {}

  static Optional<RuntimeStats> read(DockerEngine engine, String container) {
    Response response;
    try {
      response = engine.get("/containers/" + container + "/stats?stream=false&one-shot=true");
    } catch (EngineException e) {
      return Optional.empty();
    }
    if (!response.ok()) {
      return Optional.empty();
    }
    Map<String, Object> json = response.json();
    Map<String, Object> memory = ContainerState.map(json.get("memory_stats"));
    if (!memory.containsKey("usage")) {
      return Optional.empty(); // a stopped container answers with empty readings
    }
    Map<String, Object> cpu =
        ContainerState.map(ContainerState.map(json.get("cpu_stats")).get("cpu_usage"));
    return Optional.of(
        new RuntimeStats(
            Instant.now(),
            number(cpu.get("total_usage")).orElse(0) / 1e9,
            number(memory.get("usage")).orElse(0),
            number(memory.get("max_usage")),
            number(ContainerState.map(json.get("pids_stats")).get("current")).orElse(0),
            OptionalLong.empty(),
            network(json, "rx_bytes"),
            network(json, "tx_bytes")));
  }

  private static OptionalLong network(Map<String, Object> json, String field) {
    Object networks = json.get("networks");
    if (!(networks instanceof Map<?, ?> all) || all.isEmpty()) {
      return OptionalLong.empty();
    }
    long total = 0;
    for (Object each : all.values()) {
      total += number(ContainerState.map(each).get(field)).orElse(0);
    }
    return OptionalLong.of(total);
  }

  private static OptionalLong number(Object value) {
    return value instanceof Number n ? OptionalLong.of(n.longValue()) : OptionalLong.empty();
  }
}
