package dev.paddock.http;

import com.sun.net.httpserver.Authenticator;
import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** A handler bound to a path prefix of a {@link PaddockHttpServer}; filters run before it. */
final class PaddockContext extends HttpContext {
  private final PaddockHttpServer server;
  private final String path;
  private final Map<String, Object> attributes = new ConcurrentHashMap<>();
  private final List<Filter> filters = new CopyOnWriteArrayList<>();
  private volatile HttpHandler handler;

  PaddockContext(PaddockHttpServer server, String path) {
    this.server = server;
    this.path = path;
  }

  @Override
  public HttpHandler getHandler() {
    return handler;
  }

  @Override
  public void setHandler(HttpHandler handler) {
    if (handler == null) {
      throw new NullPointerException("handler");
    }
    this.handler = handler;
  }

  @Override
  public String getPath() {
    return path;
  }

  @Override
  public HttpServer getServer() {
    return server;
  }

  @Override
  public Map<String, Object> getAttributes() {
    return attributes;
  }

  @Override
  public List<Filter> getFilters() {
    return filters;
  }

  /** Not supported: authentication is the {@link Router}'s job; refusing beats ignoring it. */
  @Override
  public Authenticator setAuthenticator(Authenticator auth) {
    throw new UnsupportedOperationException(
        "Paddock's HTTP server has no Authenticator support; use the Router's auth predicate");
  }

  @Override
  public Authenticator getAuthenticator() {
    return null;
  }
}
