package dev.paddock.backend.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One watch on this control plane's pods (its labels, in its namespace), opened by the first wait
 * on a pod and shared by every wait after it: a start, resume, pause or delete that waits on its
 * pod subscribes to the pod's name and takes the events the watch delivers for it, instead of
 * opening (and closing) a list and a watch of its own. A subscriber reads the pod once after
 * subscribing; the watch, open by then, delivers every change after that read (and possibly some
 * before it, older states of the same pod, which a waiter only ever finds not done yet).
 *
 * <p>When the watch closes on an error (fabric8 reconnects by itself on a dropped connection, not
 * on 410 Gone) or cannot be opened, the next subscription opens a new one, and waiters in between
 * rely on reading the pod again at the end of each of their windows. Thread-safe: events arrive on
 * fabric8's watch thread and only go into the subscribers' queues.
 */
final class PodEvents implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("paddock.backend.kubernetes");

  /** A change of a pod as the watch delivered it: its new state, or its removal. */
  record Change(boolean deleted, Pod pod) {
    String uid() {
      return pod.getMetadata().getUid();
    }
  }

  private final Function<Watcher<Pod>, Watch> opener;
  private final Map<String, Set<Subscription>> byName = new ConcurrentHashMap<>();
  private final Object lock = new Object();

  // Guarded by lock: the open watch, or null (not opened yet, or closed on an error).
  private Watch watch;

  // Guarded by lock: which watch is the open one (a listener of an older one must not clear it).
  private int generation;

  // Guarded by lock.
  private boolean closed;

  /**
   * @param opener opens the watch of this control plane's pods, delivering to the given watcher
   */
  PodEvents(Function<Watcher<Pod>, Watch> opener) {
    this.opener = opener;
  }

  /**
   * The changes of the pod {@code name} from now on (the watch is open when this returns, or could
   * not be opened: then none come, and the waiter's windows do the work). Close it when done.
   */
  Subscription subscribe(String name) {
    Subscription subscription = new Subscription(name);
    byName.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet()).add(subscription);
    ensureOpen();
    return subscription;
  }

  private void ensureOpen() {
    synchronized (lock) {
      if (watch != null || closed) {
        return;
      }
      try {
        watch = opener.apply(new Listener(++generation));
      } catch (KubernetesClientException e) {
        LOG.log(
            System.Logger.Level.WARNING,
            "kubernetes: cannot watch the pods (waits read each pod once a second instead): {0}",
            e.getMessage());
      }
    }
  }

  /** Closes the watch; subscriptions get no more changes. */
  @Override
  public void close() {
    Watch open;
    synchronized (lock) {
      closed = true;
      open = watch;
      watch = null;
    }
    if (open != null) {
      open.close();
    }
  }

  /** One waiter's changes of one pod, in the watch's order. */
  final class Subscription implements AutoCloseable {
    private final String name;
    private final LinkedBlockingQueue<Change> changes = new LinkedBlockingQueue<>();

    private Subscription(String name) {
      this.name = name;
    }

    /**
     * The next change, waiting until {@code deadline} (a {@link System#nanoTime} value); empty when
     * none came by then.
     */
    Optional<Change> next(long deadline) throws InterruptedException {
      long left = deadline - System.nanoTime();
      return Optional.ofNullable(changes.poll(Math.max(0, left), TimeUnit.NANOSECONDS));
    }

    @Override
    public void close() {
      byName.computeIfPresent(
          name,
          (n, subscriptions) -> {
            subscriptions.remove(this);
            return subscriptions.isEmpty() ? null : subscriptions;
          });
    }
  }

  private final class Listener implements Watcher<Pod> {
    private final int generation;

    private Listener(int generation) {
      this.generation = generation;
    }

    @Override
    public void eventReceived(Action action, Pod pod) {
      if (action == Action.BOOKMARK || action == Action.ERROR || pod.getMetadata() == null) {
        return;
      }
      Set<Subscription> subscriptions = byName.get(pod.getMetadata().getName());
      if (subscriptions != null) {
        Change change = new Change(action == Action.DELETED, pod);
        subscriptions.forEach(s -> s.changes.add(change));
      }
    }

    @Override
    public void onClose(WatcherException cause) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "kubernetes: the pod watch closed ({0}); the next wait opens another",
          cause.getMessage());
      synchronized (lock) {
        if (generation == PodEvents.this.generation) {
          watch = null;
        }
      }
    }

    @Override
    public void onClose() {
      // Closed by close(): nothing to reopen.
    }
  }
}
