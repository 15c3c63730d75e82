package dev.paddock.hardening.load;

import dev.paddock.client.AgentClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The commands of the load, each with an answer known in advance and checked in full: 8 of every 10
 * run {@code echo "$(cat .load-id) $((i*i))"} (the sandbox's own id, written at set-up, proves the
 * request reached the right sandbox; the square, that the command ran), one uploads a file through
 * the agent's file route and reads it back with {@code cat}, one writes a file with {@code printf}
 * and downloads it through the file route.
 */
final class Workload {
  /** A sandbox the load drives: its id, its workspace and a client of its agent. */
  record Target(String id, String workspace, AgentClient agent) {}

  private final Path scratch;
  private final Latencies latencies = new Latencies();
  private final AtomicLong done = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();
  private final Queue<String> firstErrors = new ConcurrentLinkedQueue<>();

  Workload(Path scratch) {
    this.scratch = scratch;
  }

  /** Runs command {@code i} in {@code target} and checks its answer; never throws. */
  void run(Target target, long i) {
    long started = System.nanoTime();
    try {
      int kind = (int) (i % 10);
      if (kind == 3) {
        uploadThenCat(target, i);
      } else if (kind == 7) {
        printfThenDownload(target, i);
      } else {
        long square = i * i;
        expect(
            target,
            i,
            exec(target, "echo \"$(cat .load-id) $((" + i + "*" + i + "))\""),
            target.id() + " " + square + "\n");
      }
      latencies.add(System.nanoTime() - started);
      done.incrementAndGet();
    } catch (RuntimeException | IOException e) {
      error(target, i, e.toString());
    }
  }

  private void uploadThenCat(Target target, long i) throws IOException {
    String content = content(target, i);
    Path local = scratch.resolve(target.id() + "-up-" + i);
    Files.writeString(local, content);
    String remote = target.workspace() + "/load/up-" + i + ".txt";
    try {
      target.agent().upload(local, remote);
    } finally {
      Files.delete(local);
    }
    expect(
        target, i, exec(target, "cat load/up-" + i + ".txt && rm load/up-" + i + ".txt"), content);
  }

  private void printfThenDownload(Target target, long i) throws IOException {
    String content = content(target, i);
    String name = "load/down-" + i + ".txt";
    expect(
        target,
        i,
        exec(target, "printf '%s' '" + content + "' > " + name + " && echo written"),
        "written\n");
    Path local = scratch.resolve(target.id() + "-down-" + i);
    try {
      target.agent().download(target.workspace() + "/" + name, local);
      expect(target, i, Files.readString(local, StandardCharsets.UTF_8), content);
    } finally {
      Files.deleteIfExists(local);
    }
    expect(target, i, exec(target, "rm " + name + " && echo removed"), "removed\n");
  }

  private static String content(Target target, long i) {
    return "file " + i + " of " + target.id() + " " + Long.toHexString(i * 0x9E3779B97F4A7C15L);
  }

  private static String exec(Target target, String command) {
    StringBuilder out = new StringBuilder();
    StringBuilder err = new StringBuilder();
    int exit = target.agent().exec(command, 60, out::append, err::append);
    if (exit != 0) {
      throw new IllegalStateException(
          "`" + command + "` exited " + exit + ", stdout " + out + ", stderr " + err);
    }
    return out.toString();
  }

  private void expect(Target target, long i, String actual, String expected) {
    if (!actual.equals(expected)) {
      throw new IllegalStateException("answered '" + actual + "', expected '" + expected + "'");
    }
  }

  private void error(Target target, long i, String what) {
    if (errors.incrementAndGet() <= 20) {
      firstErrors.add("sandbox " + target.id() + " command " + i + ": " + what);
    }
  }

  Latencies latencies() {
    return latencies;
  }

  long done() {
    return done.get();
  }

  long errors() {
    return errors.get();
  }

  /** The first 20 errors, each naming its sandbox and command. */
  java.util.List<String> firstErrors() {
    return java.util.List.copyOf(firstErrors);
  }
}
