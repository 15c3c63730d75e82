package dev.paddock.backend.ssh;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The local end of each sandbox's agent: {@code 127.0.0.1:<local port>} here, forwarded over the
 * host's master connection to the agent's loopback port there. The agent's port is never open to
 * the network, and the control plane's calls to it are encrypted by SSH. Forwards are this control
 * plane's own (a restarted one makes new ones) and die with the master connection; {@link #ensure}
 * makes a new one when the one it knows is of an older connection. Thread-safe.
 */
final class Forwards {
  private static final int ATTEMPTS = 5;

  private record Forward(SshConnection connection, long generation, int local, int remote) {}

  private final Map<String, Forward> bySandbox = new ConcurrentHashMap<>();

  /**
   * The local port reaching {@code remotePort} on the connection's host for this sandbox.
   *
   * @throws SshHostException when the host cannot be reached
   * @throws IllegalStateException when no local port could be forwarded
   */
  int ensure(String sandboxId, SshConnection connection, int remotePort) {
    long generation = connection.connect();
    Forward known = bySandbox.get(sandboxId);
    if (known != null
        && known.connection() == connection
        && known.generation() == generation
        && known.remote() == remotePort) {
      return known.local();
    }
    remove(sandboxId);
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      // A port free a moment ago may be taken by the time ssh binds it: then try another.
      int local = freePort();
      if (connection.forward(local, remotePort)) {
        bySandbox.put(sandboxId, new Forward(connection, generation, local, remotePort));
        return local;
      }
    }
    throw new IllegalStateException(
        "cannot forward a local port to " + connection.target() + " port " + remotePort);
  }

  /** The local port of the sandbox's live forward, if it has one. */
  Optional<Integer> local(String sandboxId) {
    return Optional.ofNullable(bySandbox.get(sandboxId))
        .filter(f -> f.connection().generation() == f.generation())
        .map(Forward::local);
  }

  /** Cancels the sandbox's forward, if any. */
  void remove(String sandboxId) {
    Forward gone = bySandbox.remove(sandboxId);
    if (gone != null && gone.connection().generation() == gone.generation()) {
      gone.connection().cancel(gone.local(), gone.remote());
    }
  }

  /** How many sandboxes have a forward to the host of {@code connection}. */
  long count(SshConnection connection) {
    return bySandbox.values().stream().filter(f -> f.connection() == connection).count();
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free local port", e);
    }
  }
}
