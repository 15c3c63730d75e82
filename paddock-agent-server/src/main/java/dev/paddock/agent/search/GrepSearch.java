package dev.paddock.agent.search;

import dev.paddock.agent.files.SafeFs;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * One {@code grep}: {@link #WORKERS} platform threads share a stack of work, directories to read
 * and files to search, so listing and searching both run on every core; each writes the matches of
 * a file as one batch. It ends when the work runs out, the match budget is spent, the deadline
 * passes or the client goes away; the threads are joined before {@link #run} returns.
 */
final class GrepSearch {
  static final int WORKERS = Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));

  private static final Object STOP = new Object();

  private final SearchTree tree;
  private final LineFinder finder;
  private final FileGrep.Options options;
  private final Predicate<SearchTree.Entry> include;
  private final int maxPerFile;
  private final long deadlineNanos;
  private final NdjsonOut out;

  private final LinkedBlockingDeque<Object> work = new LinkedBlockingDeque<>();
  private final AtomicInteger pending = new AtomicInteger();
  private final AtomicInteger budget;
  private final AtomicBoolean stopped = new AtomicBoolean();
  private final AtomicBoolean truncated = new AtomicBoolean();
  private final AtomicBoolean timedOut = new AtomicBoolean();
  private final AtomicLong filesScanned = new AtomicLong();
  private final AtomicLong filesMatched = new AtomicLong();
  private final AtomicLong binarySkipped = new AtomicLong();
  private final AtomicLong matches = new AtomicLong();
  private volatile IOException failure;

  GrepSearch(
      SearchTree tree,
      LineFinder finder,
      FileGrep.Options options,
      Predicate<SearchTree.Entry> include,
      int maxResults,
      int maxPerFile,
      long deadlineNanos,
      NdjsonOut out) {
    this.tree = tree;
    this.finder = finder;
    this.options = options;
    this.include = include;
    this.budget = new AtomicInteger(maxResults);
    this.maxPerFile = maxPerFile;
    this.deadlineNanos = deadlineNanos;
    this.out = out;
  }

  /** Searches from {@code start} (a directory, or one file) and writes the summary line. */
  void run(Object start, long startedNanos) throws IOException, InterruptedException {
    push(start);
    Thread[] threads = new Thread[WORKERS];
    for (int i = 0; i < threads.length; i++) {
      FileGrep grep = new FileGrep(finder.copy(), options);
      threads[i] = Thread.ofPlatform().name("paddock-grep-" + i).daemon().start(() -> work(grep));
    }
    try {
      for (Thread thread : threads) {
        thread.join();
      }
    } finally {
      stopped.set(true);
      for (Thread thread : threads) {
        thread.join();
      }
      releaseLeftWork();
    }
    if (failure != null) {
      throw failure;
    }
    Map<String, Object> summary = new LinkedHashMap<>();
    summary.put("type", "summary");
    summary.put("files_scanned", filesScanned.get());
    summary.put("files_matched", filesMatched.get());
    summary.put("binary_skipped", binarySkipped.get());
    summary.put("matches", matches.get());
    summary.put("truncated", truncated.get());
    summary.put("timed_out", timedOut.get());
    summary.put("duration_ms", (System.nanoTime() - startedNanos) / 1_000_000);
    out.finish(summary);
  }

  /** Closes the directories of batches a stopped search left in its work. */
  private void releaseLeftWork() throws IOException {
    for (Object item = work.pollFirst(); item != null; item = work.pollFirst()) {
      if (item instanceof Batch batch) {
        batch.dir().release();
      }
    }
  }

  private void push(Object item) {
    pending.incrementAndGet();
    work.addFirst(item);
  }

  private void work(FileGrep grep) {
    try {
      while (!stopped.get()) {
        Object item = work.pollFirst(50, TimeUnit.MILLISECONDS);
        if (item == STOP) {
          return;
        }
        if (item == null) {
          continue;
        }
        if (System.nanoTime() - deadlineNanos > 0) {
          timedOut.set(true);
          stop();
          return;
        }
        try {
          handle(grep, item);
        } finally {
          if (pending.decrementAndGet() == 0) {
            stop();
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      failure = e;
      stop();
    }
  }

  private void stop() {
    stopped.set(true);
    for (int i = 0; i < WORKERS; i++) {
      work.addFirst(STOP);
    }
  }

  /**
   * Files of one directory searched together, opened relative to the directory's descriptor: one
   * walk from the root per directory, not per file (that walk, a dozen system calls per component,
   * was most of a search's time). Up to {@link #BATCH} files per batch, so both workers share a
   * large directory.
   */
  private record Batch(SharedDirectory dir, List<SearchTree.Entry> files) {}

  private static final int BATCH = 32;

  /**
   * An open directory used by the batches of its files, closed by the last one done with it. Only
   * {@code open} and {@code attributes} are called through it from several threads, which the JDK's
   * {@code SecureDirectoryStream} serves under its own lock.
   */
  private static final class SharedDirectory {
    final SafeFs.Directory opened;
    private final AtomicInteger users;

    SharedDirectory(SafeFs.Directory opened, int users) {
      this.opened = opened;
      this.users = new AtomicInteger(users);
    }

    void release() throws IOException {
      if (users.decrementAndGet() == 0) {
        opened.close();
      }
    }
  }

  private void handle(FileGrep grep, Object item) throws IOException {
    if (item instanceof SearchTree.Dir dir) {
      list(dir);
    } else if (item instanceof Batch batch) {
      try {
        for (SearchTree.Entry file : batch.files()) {
          if (stopped.get()) {
            return;
          }
          search(grep, file.path(), tree.open(batch.dir().opened, file));
        }
      } finally {
        batch.dir().release();
      }
    } else {
      search(grep, (Path) item, tree.open((Path) item));
    }
  }

  /** Reads {@code dir}: its subdirectories become work, and its files batches of work. */
  private void list(SearchTree.Dir dir) throws IOException {
    Optional<SafeFs.Directory> opened = tree.openDirectory(dir);
    if (opened.isEmpty()) {
      return;
    }
    List<SearchTree.Entry> files = new ArrayList<>();
    try {
      for (SearchTree.Entry entry : tree.children(dir, opened.get())) {
        if (entry.isDirectory()) {
          push(tree.enter(dir, entry));
        } else if (entry.attributes().isRegularFile() && include.test(entry)) {
          files.add(entry);
        }
      }
    } catch (IOException | RuntimeException e) {
      opened.get().close();
      if (e instanceof IOException) {
        return; // Unreadable: nothing in it is searched, as before.
      }
      throw e;
    }
    if (files.isEmpty()) {
      opened.get().close();
      return;
    }
    int batches = (files.size() + BATCH - 1) / BATCH;
    SharedDirectory shared = new SharedDirectory(opened.get(), batches);
    // Pushed after the subdirectories, so taken first: the directory closes before more open.
    for (int i = 0; i < files.size(); i += BATCH) {
      push(new Batch(shared, files.subList(i, Math.min(files.size(), i + BATCH))));
    }
  }

  private void search(FileGrep grep, Path file, Optional<SafeFs.OpenFile> opened)
      throws IOException {
    int allowed = Math.min(maxPerFile, budget.get());
    if (allowed <= 0) {
      opened.ifPresent(GrepSearch::closeQuietly);
      truncated.set(true);
      stop();
      return;
    }
    if (opened.isEmpty()) {
      return; // Unreadable, gone, or a link swapped in: not searched, as grep -s.
    }
    FileGrep.Result result;
    try (SafeFs.OpenFile open = opened.get()) {
      result = grep.scan(open.channel(), file.toString(), allowed);
    } catch (java.nio.file.FileSystemException e) {
      return;
    }
    filesScanned.incrementAndGet();
    if (result.binary()) {
      binarySkipped.incrementAndGet();
      return;
    }
    if (result.lines().isEmpty()) {
      return;
    }
    List<Map<String, Object>> lines = reserve(result.lines());
    if (lines.size() < result.lines().size() || result.cut()) {
      truncated.set(true);
    }
    filesMatched.incrementAndGet();
    matches.addAndGet(lines.size());
    out.write(lines);
    if (budget.get() <= 0) {
      stop();
    }
  }

  private static void closeQuietly(SafeFs.OpenFile opened) {
    try {
      opened.close();
    } catch (IOException e) {
      // Nothing was read from it.
    }
  }

  /** The lines the shared budget still allows, taken from it. */
  private List<Map<String, Object>> reserve(List<Map<String, Object>> lines) {
    while (true) {
      int left = budget.get();
      int take = Math.min(left, lines.size());
      if (budget.compareAndSet(left, left - take)) {
        return lines.subList(0, take);
      }
    }
  }
}
