package dev.paddock.http;

import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * The {@link HttpServer} behind {@link HttpServers}: a blocking accept loop on a virtual thread,
 * one {@link Connection} per accepted socket, and a watchdog that closes connections whose writes
 * are stuck. A connection runs on one of {@link HttpServerConfig#platformThreads()} platform
 * threads while one is free (it gives it back when it idles or is upgraded), else on the executor
 * or a virtual thread. Lifecycle as the JDK's: bind, {@link #start()} once, {@link #stop(int)}
 * once.
 */
final class PaddockHttpServer extends HttpServer {
  private final HttpServerConfig config;
  private final ServerSocket listener;
  private final List<PaddockContext> contexts = new ArrayList<>(); // guarded by lock
  private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
  private final HttpDate clock = new HttpDate();
  private final Semaphore platformSlots;
  private final ExecutorService platformThreads; // null when the config asks for none
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition idle = lock.newCondition();
  private int activeExchanges; // guarded by lock
  private Executor executor; // guarded by lock; null: a virtual thread per connection
  private Thread acceptor;
  private Thread watchdog;
  private volatile boolean stopping;

  private PaddockHttpServer(HttpServerConfig config, ServerSocket listener) {
    this.config = config;
    this.listener = listener;
    int platform = config.platformThreads();
    this.platformSlots = new Semaphore(platform);
    this.platformThreads =
        platform == 0
            ? null
            : idleEnding(
                new ThreadPoolExecutor(
                    platform,
                    platform,
                    30,
                    TimeUnit.SECONDS,
                    new LinkedBlockingQueue<>(),
                    Thread.ofPlatform().daemon().name("paddock-http-platform-", 0).factory()));
  }

  /**
   * {@code pool} with its threads ending after their keep-alive idle. The slots bound the tasks, so
   * one queues only for the moment a thread that gave its slot back takes to return to the pool: a
   * connection given a slot always gets a platform thread.
   */
  private static ThreadPoolExecutor idleEnding(ThreadPoolExecutor pool) {
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  static PaddockHttpServer bind(HttpServerConfig config) throws IOException {
    // TLS is layered on each accepted socket, so every connection gets the context current then.
    ServerSocket socket = new ServerSocket();
    try {
      socket.setReuseAddress(true);
      socket.bind(config.address(), config.backlog() > 0 ? config.backlog() : 50);
    } catch (IOException e) {
      socket.close();
      throw e;
    }
    return new PaddockHttpServer(config, socket);
  }

  HttpServerConfig config() {
    return config;
  }

  HttpDate clock() {
    return clock;
  }

  boolean isStopping() {
    return stopping;
  }

  @Override
  public void bind(InetSocketAddress address, int backlog) {
    throw new IllegalStateException("already bound to " + getAddress());
  }

  @Override
  public void start() {
    lock.lock();
    try {
      if (acceptor != null) {
        throw new IllegalStateException("server already started");
      }
      acceptor = Thread.ofVirtual().name("paddock-http-accept").start(this::acceptLoop);
      watchdog = Thread.ofVirtual().name("paddock-http-watchdog").start(this::watchLoop);
    } finally {
      lock.unlock();
    }
  }

  private void acceptLoop() {
    while (!stopping) {
      Socket socket;
      try {
        socket = listener.accept();
      } catch (IOException e) {
        if (stopping) {
          return;
        }
        continue; // a failed accept (e.g. out of file descriptors) must not end serving
      }
      serve(socket);
    }
  }

  private void serve(Socket accepted) {
    Socket socket;
    try {
      socket = secured(accepted);
    } catch (IOException | RuntimeException e) {
      closeQuietly(accepted);
      return;
    }
    Connection connection = new Connection(this, socket);
    connections.add(connection);
    try {
      if (lendPlatformThread(connection)) {
        return;
      }
      Executor chosen = executor();
      if (chosen == null) {
        Thread.ofVirtual().name("paddock-http-connection").start(connection);
      } else {
        chosen.execute(connection);
      }
    } catch (RejectedExecutionException e) {
      connection.abort();
      removed(connection);
    }
  }

  /** Runs {@code connection} on a free platform thread; false when none is free. */
  private boolean lendPlatformThread(Connection connection) {
    if (platformThreads == null || !platformSlots.tryAcquire()) {
      return false;
    }
    connection.lend(platformSlots::release);
    try {
      platformThreads.execute(connection);
      return true;
    } catch (RejectedExecutionException e) {
      // The server is stopping.
      connection.lend(null);
      platformSlots.release();
      return false;
    }
  }

  /**
   * {@code accepted} as the server side of a TLS connection when TLS is on; no I/O happens here.
   */
  private Socket secured(Socket accepted) throws IOException {
    Optional<SSLContext> tls = config.tls();
    if (tls.isEmpty()) {
      return accepted;
    }
    SSLSocket socket = (SSLSocket) tls.get().getSocketFactory().createSocket(accepted, null, true);
    socket.setUseClientMode(false);
    return socket;
  }

  /** Closes connections whose write is stuck or whose WebSocket close is overdue. */
  private void watchLoop() {
    long tickMillis = Math.clamp(config.writeTimeout().toMillis() / 4, 10, 1000);
    while (!stopping) {
      try {
        Thread.sleep(tickMillis);
      } catch (InterruptedException e) {
        return;
      }
      long now = System.nanoTime();
      for (Connection connection : connections) {
        connection.watch(now);
      }
    }
  }

  void removed(Connection connection) {
    connections.remove(connection);
  }

  void exchangeStarted() {
    lock.lock();
    try {
      activeExchanges++;
    } finally {
      lock.unlock();
    }
  }

  void exchangeEnded() {
    lock.lock();
    try {
      activeExchanges--;
      if (activeExchanges == 0) {
        idle.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * As the JDK's: stops accepting at once, waits up to {@code delaySeconds} for running exchanges
   * to finish, then closes every connection (WebSockets get 1001 "going away" first).
   */
  @Override
  public void stop(int delaySeconds) {
    if (delaySeconds < 0) {
      throw new IllegalArgumentException("negative delay: " + delaySeconds);
    }
    stopping = true;
    try {
      listener.close();
    } catch (IOException e) {
      // Closing a listening socket fails only if already closed: nothing to undo.
    }
    awaitIdle(TimeUnit.SECONDS.toNanos(delaySeconds));
    for (Connection connection : connections) {
      connection.shutdown();
    }
    join(acceptor);
    if (watchdog != null) {
      watchdog.interrupt();
    }
    if (platformThreads != null) {
      // As an executor's owner would: a handler still running on a platform thread is interrupted
      // (one that moved runs on the executor, whose owner shuts it down).
      platformThreads.shutdownNow();
    }
  }

  private void awaitIdle(long nanos) {
    lock.lock();
    try {
      long left = nanos;
      while (activeExchanges > 0 && left > 0) {
        left = idle.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      lock.unlock();
    }
  }

  private static void join(Thread thread) {
    if (thread == null) {
      return;
    }
    try {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Where connections without a platform thread run: those that found none free, and those that
   * moved off one ({@link HttpServerConfig#platformThreads()}); null, a virtual thread each. Unlike
   * the JDK's server, a connection on a lent platform thread does not run on it.
   */
  @Override
  public void setExecutor(Executor executor) {
    lock.lock();
    try {
      if (acceptor != null) {
        throw new IllegalStateException("setExecutor after start");
      }
      this.executor = executor;
    } finally {
      lock.unlock();
    }
  }

  /** The executor running connection tasks; null means a new virtual thread per connection. */
  @Override
  public Executor getExecutor() {
    return executor();
  }

  /** The executor set with {@link #setExecutor}, or null: a new virtual thread per connection. */
  Executor executor() {
    lock.lock();
    try {
      return executor;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public HttpContext createContext(String path, HttpHandler handler) {
    PaddockContext context = createContext(path);
    context.setHandler(handler);
    return context;
  }

  @Override
  public PaddockContext createContext(String path) {
    if (path == null || !path.startsWith("/")) {
      throw new IllegalArgumentException("context path must start with /: " + path);
    }
    lock.lock();
    try {
      for (PaddockContext existing : contexts) {
        if (existing.getPath().equals(path)) {
          throw new IllegalArgumentException("context already exists: " + path);
        }
      }
      PaddockContext context = new PaddockContext(this, path);
      contexts.add(context);
      return context;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void removeContext(String path) {
    lock.lock();
    try {
      if (!contexts.removeIf(c -> c.getPath().equals(path))) {
        throw new IllegalArgumentException("no context " + path);
      }
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void removeContext(HttpContext context) {
    removeContext(context.getPath());
  }

  /** The context with the longest path that prefixes {@code path}, as the JDK chooses. */
  PaddockContext contextFor(String path) {
    lock.lock();
    try {
      PaddockContext best = null;
      for (PaddockContext context : contexts) {
        String prefix = context.getPath();
        boolean matches =
            path.startsWith(prefix)
                && (prefix.endsWith("/")
                    || path.length() == prefix.length()
                    || path.charAt(prefix.length()) == '/');
        if (matches && (best == null || prefix.length() > best.getPath().length())) {
          best = context;
        }
      }
      return best;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public InetSocketAddress getAddress() {
    return (InetSocketAddress) listener.getLocalSocketAddress();
  }

  static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // Nothing to do: the socket is unusable either way.
    }
  }

  static boolean isReset(IOException e) {
    return e instanceof SocketException;
  }
}
