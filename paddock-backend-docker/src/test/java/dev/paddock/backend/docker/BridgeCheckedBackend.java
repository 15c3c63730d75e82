package dev.paddock.backend.docker;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.spi.ListedRuntime;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.RuntimeStats;
import dev.paddock.api.spi.SandboxAgent;
import dev.paddock.api.spi.SandboxBackend;
import java.net.URI;
import java.util.List;
import java.util.Optional;

/**
 * The Docker backend as the bridge-shape contracts see it, with every handle and state it returns
 * checked against {@link BridgeShapeEngine}: a container's handle says {@code network=bridge} and
 * names an agent port the proxy published for 8000, and the agent URL is that published port for
 * container port 8000. So a backend that fell back to host networking (and the agent's ready-line
 * port) fails the suite instead of passing it. Each call is the delegate's, unchanged.
 */
final class BridgeCheckedBackend implements SandboxBackend {
  private final SandboxBackend delegate;
  private final BridgeShapeEngine proxy;

  BridgeCheckedBackend(SandboxBackend delegate, BridgeShapeEngine proxy) {
    this.delegate = delegate;
    this.proxy = proxy;
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public RuntimeHandle start(RuntimeRequest request) {
    return checked(delegate.start(request));
  }

  @Override
  public RuntimeState inspect(RuntimeHandle handle) {
    return checked(delegate.inspect(handle));
  }

  @Override
  public void pause(RuntimeHandle handle) {
    delegate.pause(handle);
  }

  @Override
  public RuntimeHandle resume(RuntimeHandle handle) {
    return checked(delegate.resume(handle));
  }

  @Override
  public RuntimeHandle relaunch(RuntimeHandle handle, String sessionKey) {
    return checked(delegate.relaunch(handle, sessionKey));
  }

  @Override
  public void destroy(RuntimeHandle handle) {
    delegate.destroy(handle);
  }

  @Override
  public List<RuntimeHandle> list() {
    return delegate.list().stream().map(this::checked).toList();
  }

  @Override
  public void reclaim(String sandboxId) {
    delegate.reclaim(sandboxId);
  }

  @Override
  public List<ListedRuntime> listWithState() {
    List<ListedRuntime> listed = delegate.listWithState();
    listed.forEach(
        runtime -> {
          checked(runtime.handle());
          checked(runtime.state());
        });
    return listed;
  }

  @Override
  public SandboxAgent agent(RuntimeHandle handle, SandboxAgent direct) {
    return delegate.agent(handle, direct);
  }

  @Override
  public Optional<RuntimeStats> stats(RuntimeHandle handle) {
    return delegate.stats(handle);
  }

  @Override
  public Optional<byte[]> agentLog(RuntimeHandle handle, long offset, int maxBytes) {
    return delegate.agentLog(handle, offset, maxBytes);
  }

  @Override
  public void close() {
    delegate.close();
  }

  // A workspace volume without its container has no network attribute; a portless handle is one
  // whose agent is not answering.
  private RuntimeHandle checked(RuntimeHandle handle) {
    String network = handle.attributes().get(DockerHandles.NETWORK);
    if (network != null && !network.equals("bridge")) {
      proxy.record(handle.sandboxId() + ": handle on network " + network + ", not bridge");
    }
    int port = DockerHandles.port(handle);
    if (port > 0 && !proxy.publishedAgentPorts().contains(port)) {
      proxy.record(handle.sandboxId() + ": agent port " + port + " was never published for 8000");
    }
    return handle;
  }

  private RuntimeState checked(RuntimeState state) {
    for (ExposedUrl url : state.urls()) {
      if (url.name().equals(ExposedUrl.AGENT_SERVER)) {
        int port = URI.create(url.url()).getPort();
        if (url.port() != DockerSettings.AGENT_PORT
            || !proxy.publishedAgentPorts().contains(port)) {
          proxy.record("agent URL " + url + " is not a published port for container port 8000");
        }
      }
    }
    return state;
  }
}
