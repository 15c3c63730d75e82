package dev.paddock.api;

import java.util.Objects;

/**
 * A URL a sandbox exposes, such as its agent-server.
 *
 * @param name what it is ({@link #AGENT_SERVER}, {@link #VSCODE}, {@link #WORKER_1}, ...)
 * @param url where a client reaches it
 * @param port the port inside the sandbox
 */
public record ExposedUrl(String name, String url, int port) {
  public static final String AGENT_SERVER = "AGENT_SERVER";
  public static final String VSCODE = "VSCODE";
  public static final String WORKER_1 = "WORKER_1";
  public static final String WORKER_2 = "WORKER_2";

  public ExposedUrl {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(url, "url");
  }
}
