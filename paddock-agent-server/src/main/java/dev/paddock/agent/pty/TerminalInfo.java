package dev.paddock.agent.pty;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A terminal as the API shows it.
 *
 * @param outputOffset bytes the terminal has written so far (the next byte's offset)
 * @param scrollbackOffset the oldest offset still held for replay
 */
record TerminalInfo(
    String id,
    String command,
    String cwd,
    int cols,
    int rows,
    long pid,
    boolean running,
    Optional<Integer> exitCode,
    Instant createdAt,
    Optional<Instant> exitedAt,
    long outputOffset,
    long scrollbackOffset,
    int viewers) {

  Map<String, Object> toJson() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("id", id);
    json.put("command", command);
    json.put("cwd", cwd);
    json.put("cols", cols);
    json.put("rows", rows);
    json.put("pid", pid);
    json.put("status", running ? "running" : "exited");
    json.put("exit_code", exitCode.orElse(null));
    json.put("created_at", createdAt.toString());
    json.put("exited_at", exitedAt.map(Instant::toString).orElse(null));
    json.put("output_offset", outputOffset);
    json.put("scrollback_offset", scrollbackOffset);
    json.put("viewers", viewers);
    return json;
  }
}
