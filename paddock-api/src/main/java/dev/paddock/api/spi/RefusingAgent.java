package dev.paddock.api.spi;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** {@link SandboxAgent#refusing}. */
record RefusingAgent(String reason) implements SandboxAgent {
  @Override
  public void replaceSessionKeys(List<String> digests) {
    throw new AgentCallException(reason);
  }

  @Override
  public Optional<Archive> openArchive(String format, boolean defaultExcludes, Duration timeout) {
    throw new AgentCallException(reason);
  }

  @Override
  public Optional<Map<String, Object>> environment(Duration timeout) {
    return Optional.empty();
  }

  @Override
  public Optional<Duration> idleTime() {
    return Optional.empty();
  }
}
