package dev.paddock.agent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * The D3 race, for any route: a workspace directory {@code d} that a thread flips, as fast as it
 * can, between a real directory and a link to a canary directory outside the root, while clients
 * send requests through it. Requests are counted by status; one that answers 500 or whose body
 * shows the canary's text is an escape, and so is any change to the canary. Closing stops the
 * flipper and puts the real directory back at {@code d}.
 */
public final class SwappedDirectory implements AutoCloseable {
  /** Text only the canary's files hold. */
  public static final String CANARY_TEXT = "CANARY-SECRET";

  private static final long STATE_NANOS = 500_000;

  /**
   * How often each wanted side of a race must have been met for the run to count: enough that a
   * stub which never meets the link fails, few enough for a loaded two-core machine (CI met the
   * link side only 15 and 17 times in 90 s of requests while the rest of the suite ran).
   */
  public static final int LEAST_EACH = 5;

  /** One request of the race; {@code i} is the attempt's number. */
  @FunctionalInterface
  public interface Attempt {
    HttpResponse<String> send(int i) throws Exception;
  }

  private final Path flipped;
  private final Path real;
  private final Path link;
  private final Path canary;
  private final AtomicBoolean flipping = new AtomicBoolean(true);
  private final LongAdder flips = new LongAdder();
  private final Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
  private final List<String> escapes = new CopyOnWriteArrayList<>();
  private final Map<String, String> canaryBefore;
  private final Thread flipper;

  private SwappedDirectory(Path workspace, Path canary, Map<String, String> files)
      throws IOException {
    this.canary = canary;
    this.flipped = workspace.resolve("d");
    this.real = Files.createDirectories(workspace.resolve("d.real"));
    this.link = Files.createSymbolicLink(workspace.resolve("d.link"), canary);
    Files.createDirectories(canary);
    for (Map.Entry<String, String> file : files.entrySet()) {
      Files.writeString(real.resolve(file.getKey()), file.getValue());
      Files.writeString(canary.resolve(file.getKey()), CANARY_TEXT + "\n" + file.getValue());
    }
    Files.setPosixFilePermissions(canary, PosixFilePermissions.fromString("rwxrwxrwx"));
    this.canaryBefore = snapshot(canary);
    this.flipper = Thread.ofPlatform().start(this::flip);
  }

  /**
   * Starts flipping {@code workspace/d}: each of {@code files} (name to content) is in the real
   * directory, and in the canary (under {@code scratch}, world-writable, so only confinement keeps
   * a write out) with {@link #CANARY_TEXT} before its content.
   */
  public static SwappedDirectory start(Path workspace, Path scratch, Map<String, String> files)
      throws IOException {
    return new SwappedDirectory(workspace, scratch.resolve("canary"), files);
  }

  /** The flipped directory's path. */
  public Path path() {
    return flipped;
  }

  /** Runs {@code attempts} requests on {@code clients} threads, and tallies them. */
  public void race(int attempts, int clients, Attempt attempt) throws Exception {
    race(attempts, clients, attempt, Set.of());
  }

  /**
   * Runs at least {@code attempts} requests on {@code clients} threads, and on (for up to {@link
   * #MORE_AT_MOST} more) until each status in {@code wanted} answered more than {@link #LEAST_EACH}
   * times: on a loaded machine the flipper gets less time, and a run that never met one side of the
   * race would prove nothing about it.
   */
  public void race(int attempts, int clients, Attempt attempt, Set<Integer> wanted)
      throws Exception {
    AtomicInteger next = new AtomicInteger();
    long[] deadline = {Long.MAX_VALUE};
    try (ExecutorService pool = Executors.newFixedThreadPool(clients)) {
      List<Future<?>> runs = new ArrayList<>();
      for (int c = 0; c < clients; c++) {
        runs.add(
            pool.submit(
                () -> {
                  for (int i = next.getAndIncrement();
                      i < attempts || (!seenEnough(wanted) && before(deadline));
                      i = next.getAndIncrement()) {
                    tally(i, attempt.send(i));
                  }
                  return null;
                }));
      }
      for (Future<?> run : runs) {
        run.get();
      }
    }
  }

  /** Whether the extra time, counted from the first call once the attempts are done, is left. */
  private static synchronized boolean before(long[] deadline) {
    if (deadline[0] == Long.MAX_VALUE) {
      deadline[0] = System.nanoTime() + MORE_AT_MOST.toNanos();
    }
    return System.nanoTime() < deadline[0];
  }

  /** How long a race goes on past its attempts for a side it has not met often enough. */
  static final java.time.Duration MORE_AT_MOST = java.time.Duration.ofSeconds(90);

  private boolean seenEnough(Set<Integer> wanted) {
    return wanted.stream().allMatch(status -> count(status) > LEAST_EACH);
  }

  private void tally(int i, HttpResponse<String> response) {
    statuses.computeIfAbsent(response.statusCode(), s -> new AtomicInteger()).incrementAndGet();
    if (response.statusCode() >= 500 || response.body().contains(CANARY_TEXT)) {
      escapes.add("attempt " + i + " (" + response.statusCode() + "): " + response.body());
    }
  }

  /** Requests that answered 500 or showed the canary. */
  public List<String> escapes() {
    return List.copyOf(escapes);
  }

  /** How many requests answered {@code status}. */
  public int count(int status) {
    return statuses.getOrDefault(status, new AtomicInteger()).get();
  }

  public Map<Integer, AtomicInteger> statuses() {
    return Map.copyOf(statuses);
  }

  public long flips() {
    return flips.sum();
  }

  /** The canary as it was before the race. */
  public Map<String, String> canaryBefore() {
    return canaryBefore;
  }

  /** Every entry of the canary now: name to mode, mtime and content. */
  public Map<String, String> canaryNow() throws IOException {
    return snapshot(canary);
  }

  /**
   * Swaps the directory and the link at {@code d} on a clock: each holds the name for {@link
   * #STATE_NANOS} (moving the directory may take longer: the kernel waits for the agent's
   * operations inside it), and in between the name is briefly missing.
   */
  private void flip() {
    try {
      boolean linkIn = false;
      Files.move(real, flipped, StandardCopyOption.ATOMIC_MOVE);
      while (flipping.get()) {
        boolean wantLink = (System.nanoTime() / STATE_NANOS) % 2 == 1;
        if (wantLink == linkIn) {
          // Parked, not spinning: on two cores a spinning flipper starves the agent it races.
          LockSupport.parkNanos(STATE_NANOS / 10);
          continue;
        }
        Files.move(flipped, linkIn ? link : real, StandardCopyOption.ATOMIC_MOVE);
        Files.move(wantLink ? link : real, flipped, StandardCopyOption.ATOMIC_MOVE);
        linkIn = wantLink;
        flips.increment();
      }
      Files.move(flipped, linkIn ? link : real, StandardCopyOption.ATOMIC_MOVE);
      Files.move(real, flipped, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    flipping.set(false);
    try {
      flipper.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static Map<String, String> snapshot(Path dir) throws IOException {
    Map<String, String> entries = new TreeMap<>();
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.toList()) {
        String what =
            PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS))
                + " "
                + Files.getLastModifiedTime(p, LinkOption.NOFOLLOW_LINKS)
                + (Files.isRegularFile(p) ? " " + Files.readString(p) : "");
        entries.put(dir.relativize(p).toString(), what);
      }
    }
    return entries;
  }
}
