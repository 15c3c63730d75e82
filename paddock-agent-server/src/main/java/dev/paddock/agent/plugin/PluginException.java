package dev.paddock.agent.plugin;

/** A plugin could not be loaded or started: the agent does not start (exit code 2). */
public final class PluginException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  PluginException(String message) {
    super(message);
  }

  PluginException(String message, Throwable cause) {
    super(message, cause);
  }
}
