package dev.paddock.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Everything the bench must undo (agent processes, helper processes, temporary folders), closed in
 * reverse order of registration. {@link #closeAll()} runs from the bench's {@code finally} and
 * again from a JVM shutdown hook, so Ctrl-C and failures clean up too; closing twice is harmless.
 * Thread-safe: registration and closing synchronise on this.
 */
final class Cleanup {
  private final Deque<AutoCloseable> pending = new ArrayDeque<>();

  /** A bench's body, given the cleanup that outlives it. */
  interface Body {
    void run(Cleanup cleanup) throws Exception;
  }

  /**
   * Runs {@code body} with a fresh cleanup that is closed when it ends, and also from a shutdown
   * hook if the bench is stopped (SIGTERM, Ctrl-C) before that.
   */
  static void around(Body body) throws Exception {
    Cleanup cleanup = new Cleanup();
    Thread hook = new Thread(cleanup::closeAll, "bench-cleanup");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      body.run(cleanup);
    } finally {
      cleanup.closeAll();
      Runtime.getRuntime().removeShutdownHook(hook);
    }
  }

  /** Registers {@code resource} and returns it. */
  synchronized <T extends AutoCloseable> T register(T resource) {
    pending.push(resource);
    return resource;
  }

  /** Closes everything still registered; the first failure is thrown, later ones suppressed. */
  synchronized void closeAll() {
    RuntimeException first = null;
    while (!pending.isEmpty()) {
      try {
        pending.pop().close();
      } catch (Exception e) {
        if (first == null) {
          first = new IllegalStateException("bench cleanup failed: " + e.getMessage(), e);
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  /** A new temporary folder, deleted with everything in it on cleanup. */
  Path tempDir(String prefix) throws IOException {
    Path dir = Files.createTempDirectory(prefix);
    register(() -> deleteTree(dir));
    return dir;
  }

  static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try {
      Files.walkFileTree(
          root,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              Files.deleteIfExists(file);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
              Files.deleteIfExists(dir);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
              if (e instanceof NoSuchFileException) {
                return FileVisitResult.CONTINUE;
              }
              throw e;
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete temporary folder " + root, e);
    }
  }
}
