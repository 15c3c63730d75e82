package dev.paddock.agent.git;

import dev.paddock.agent.AgentConfig;
import dev.paddock.agent.http.Router;

/** Placeholder until the git routes land. */
public final class GitRoutes {
  private GitRoutes() {}

  public static void register(Router router, AgentConfig config) {}
}
