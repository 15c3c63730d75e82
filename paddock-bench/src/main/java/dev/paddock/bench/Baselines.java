package dev.paddock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;

/**
 * The reference measurements every agent figure is read against, taken in the same run on the same
 * machine: what the operating system and the JDK cost without the agent in between.
 */
final class Baselines {
  private static final String BASH = "/bin/bash";

  private final Cleanup cleanup;

  Baselines(Cleanup cleanup) {
    this.cleanup = cleanup;
  }

  /** Spawning {@code /bin/true} with {@link ProcessBuilder} and waiting for it, one at a time. */
  Samples spawnTrue(int warmup, int count) throws IOException, InterruptedException {
    return spawn(spawnTrueBuilder(), warmup, count);
  }

  /**
   * Spawning the agent's own recipe for a one-shot command, {@code setsid bash -c true} (see
   * OneShotCommand), without the agent: how much of a round trip is process creation alone.
   */
  Samples spawnAgentRecipe(int warmup, int count) throws IOException, InterruptedException {
    return spawn(spawnTrueBuilder().command("setsid", BASH, "-c", "true"), warmup, count);
  }

  private static Samples spawn(ProcessBuilder builder, int warmup, int count)
      throws IOException, InterruptedException {
    Samples samples = new Samples(count);
    for (int i = 0; i < warmup + count; i++) {
      long start = System.nanoTime();
      builder.start().waitFor();
      if (i >= warmup) {
        samples.add(System.nanoTime() - start);
      }
    }
    return samples;
  }

  /** {@link #spawnTrue} on {@code threads} threads at once: processes per second. */
  double spawnTrueConcurrent(int threads, int perThread, int warmup)
      throws InterruptedException, ExecutionException {
    ProcessBuilder builder = spawnTrueBuilder();
    return Throughput.perSecond(threads, perThread, warmup, () -> () -> builder.start().waitFor());
  }

  private static ProcessBuilder spawnTrueBuilder() {
    return new ProcessBuilder("/bin/true")
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.DISCARD);
  }

  /**
   * The floor of a persistent shell: a bash already running, fed {@code true; echo x} over a pipe
   * and read back, one at a time.
   */
  Samples shellPipe(int warmup, int count) throws IOException, InterruptedException {
    ChildProcess shell =
        cleanup.register(
            new ChildProcess(
                new ProcessBuilder(BASH, "--noprofile", "--norc")
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start()));
    try {
      OutputStream in = shell.process().getOutputStream();
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(shell.process().getInputStream(), StandardCharsets.UTF_8));
      byte[] command = "true; echo x\n".getBytes(StandardCharsets.UTF_8);
      Samples samples = new Samples(count);
      for (int i = 0; i < warmup + count; i++) {
        long start = System.nanoTime();
        in.write(command);
        in.flush();
        String line = out.readLine();
        if (!"x".equals(line)) {
          throw new IllegalStateException("bash answered '" + line + "' instead of 'x'");
        }
        if (i >= warmup) {
          samples.add(System.nanoTime() - start);
        }
      }
      return samples;
    } finally {
      shell.close();
    }
  }

  /** The streamed pipeline run locally into /dev/null: MiB per second. */
  double pipelineMiBPerSecond(String pipeline, long bytes)
      throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder(BASH, "-c", pipeline + " > /dev/null")
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    long start = System.nanoTime();
    int exit = p.waitFor();
    double seconds = (System.nanoTime() - start) / 1e9;
    if (exit != 0) {
      throw new IllegalStateException("baseline pipeline exited with " + exit + ": " + pipeline);
    }
    return bytes / (1024.0 * 1024.0) / seconds;
  }

  /** Process time of {@code java -Xshare:auto -version}, start to exit. */
  Samples javaVersion(Checkout checkout, int count) throws IOException, InterruptedException {
    ProcessBuilder builder =
        new ProcessBuilder(checkout.java().toString(), "-Xshare:auto", "-version")
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(ProcessBuilder.Redirect.DISCARD);
    Samples samples = new Samples(count);
    for (int i = 0; i < count; i++) {
      long start = System.nanoTime();
      int exit = builder.start().waitFor();
      samples.add(System.nanoTime() - start);
      if (exit != 0) {
        throw new IllegalStateException("java -version exited with " + exit);
      }
    }
    return samples;
  }

  /**
   * RSS of an idle JVM with the agent's options that loaded only {@link IdleJvm}, {@code settle}
   * milliseconds after it said ready: the floor under the agent's idle RSS. Median of {@code count}
   * starts.
   */
  double idleJvmRssMiB(Checkout checkout, int count, long settleMillis)
      throws IOException, InterruptedException {
    List<Double> rss = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      List<String> argv = new ArrayList<>();
      argv.add(checkout.java().toString());
      argv.add("@" + checkout.jvmOptions());
      argv.addAll(List.of("-cp", System.getProperty("java.class.path"), IdleJvm.class.getName()));
      ChildProcess jvm =
          cleanup.register(
              new ChildProcess(
                  new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.INHERIT).start()));
      try {
        BufferedReader out =
            new BufferedReader(
                new InputStreamReader(jvm.process().getInputStream(), StandardCharsets.UTF_8));
        if (!"ready".equals(out.readLine())) {
          throw new IllegalStateException("the idle JVM did not start; see its stderr above");
        }
        Thread.sleep(settleMillis);
        rss.add(Rss.ofPid(jvm.pid()));
      } finally {
        jvm.close();
      }
    }
    return median(rss);
  }

  static double median(List<Double> values) {
    List<Double> sorted = values.stream().sorted().toList();
    return sorted.get((sorted.size() - 1) / 2);
  }
}
