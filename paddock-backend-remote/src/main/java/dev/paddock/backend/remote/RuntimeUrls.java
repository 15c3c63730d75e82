package dev.paddock.backend.remote;

import dev.paddock.api.ExposedUrl;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * The URLs of a runtime from the {@code url} its runtime API reports, as OpenHands builds them:
 * <em>path mode</em> when the URL's path starts with {@code /<runtime_id>} (one ingress host,
 * services at {@code scheme://host/<runtime_id>/<service>}), else <em>subdomain mode</em> (services
 * at {@code scheme://<service>-host/path}). The agent-server is the reported URL itself. Paddock's
 * runtime API exposes only the agent, so the worker and VS Code URLs are added for other runtime
 * APIs only.
 */
final class RuntimeUrls {
  static final int AGENT_PORT = 60000;
  static final int VSCODE_PORT = 60001;
  static final int WORKER_1_PORT = 12000;
  static final int WORKER_2_PORT = 12001;

  private RuntimeUrls() {}

  static boolean pathMode(String url, String runtimeId) {
    String path = URI.create(url).getRawPath();
    return path != null && (path.equals("/" + runtimeId) || path.startsWith("/" + runtimeId + "/"));
  }

  /** The URL of {@code service} ({@code vscode}, {@code work-1}, {@code work-2}). */
  static String service(String url, String runtimeId, String service) {
    URI uri = URI.create(url);
    String authority = uri.getRawAuthority();
    if (pathMode(url, runtimeId)) {
      return uri.getScheme() + "://" + authority + "/" + runtimeId + "/" + service;
    }
    String path = uri.getRawPath() == null ? "" : uri.getRawPath();
    return uri.getScheme() + "://" + service + "-" + authority + path;
  }

  /**
   * @param withServices add VS Code and the two workers (runtime APIs other than Paddock's)
   */
  static List<ExposedUrl> exposed(String url, String runtimeId, boolean withServices) {
    List<ExposedUrl> urls = new ArrayList<>();
    urls.add(new ExposedUrl(ExposedUrl.AGENT_SERVER, url, AGENT_PORT));
    if (withServices) {
      urls.add(new ExposedUrl(ExposedUrl.VSCODE, service(url, runtimeId, "vscode"), VSCODE_PORT));
      urls.add(
          new ExposedUrl(ExposedUrl.WORKER_1, service(url, runtimeId, "work-1"), WORKER_1_PORT));
      urls.add(
          new ExposedUrl(ExposedUrl.WORKER_2, service(url, runtimeId, "work-2"), WORKER_2_PORT));
    }
    return urls;
  }
}
