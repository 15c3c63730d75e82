package dev.paddock.agent.files;

import dev.paddock.agent.AgentConfig;
import dev.paddock.agent.http.Router;

/** Placeholder until the file routes land. */
public final class FileRoutes {
  private FileRoutes() {}

  public static void register(Router router, AgentConfig config) {}
}
