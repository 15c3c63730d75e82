package dev.paddock.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code docker} command-line client, the baselines' side of {@link DockerBench}: what someone
 * typing docker commands waits for, client start-up included. Every call waits for the command and
 * fails, quoting its output, when it exits non-zero.
 */
final class DockerCli {
  /** Runs {@code docker args...}; returns its standard output and error, stripped. */
  String run(String... args) throws IOException, InterruptedException {
    List<String> argv = new ArrayList<>();
    argv.add("docker");
    argv.addAll(List.of(args));
    Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
    process.getOutputStream().close();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int exit = process.waitFor();
    if (exit != 0) {
      throw new IllegalStateException(
          String.join(" ", argv) + " exited with " + exit + ": " + output.strip());
    }
    return output.strip();
  }

  /** How long {@code docker args...} takes from spawn to exit, in nanoseconds. */
  long time(String... args) throws IOException, InterruptedException {
    long start = System.nanoTime();
    run(args);
    return System.nanoTime() - start;
  }

  /** The lines of {@code docker args...}, without blank ones. */
  List<String> lines(String... args) throws IOException, InterruptedException {
    return run(args).lines().filter(line -> !line.isBlank()).toList();
  }
}
