package dev.paddock.bench;

import java.io.IOException;

/**
 * The idle-memory baseline: a JVM started with the agent's options that loads nothing but this
 * class, says {@code ready}, and waits for its standard input to close.
 */
public final class IdleJvm {
  private IdleJvm() {}

  public static void main(String[] args) throws IOException {
    System.out.println("ready");
    System.out.flush();
    while (System.in.read() >= 0) {
      // Waits for end of input; the bench closes it (or kills this process).
    }
  }
}
