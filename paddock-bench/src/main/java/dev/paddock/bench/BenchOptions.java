package dev.paddock.bench;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The options every bench command takes: {@code --quick} (a smoke run), {@code --json FILE} (the
 * figures as JSON too), and, for benches that have one, {@code --large}.
 *
 * @param quick a short smoke run
 * @param large the bench's large variant (only where {@code parse} allowed it)
 * @param json where to write the figures as JSON
 */
record BenchOptions(boolean quick, boolean large, Optional<Path> json) {
  /** Parses {@code args}; prints {@code usage} and exits 2 on anything else. */
  static BenchOptions parseOrExit(String[] args, String usage, boolean largeAllowed) {
    boolean quick = false;
    boolean large = false;
    Optional<Path> json = Optional.empty();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--large" -> {
          if (!largeAllowed) {
            exit(usage);
          }
          large = true;
        }
        case "--json" -> {
          if (++i >= args.length) {
            exit(usage);
          }
          json = Optional.of(Path.of(args[i]));
        }
        default -> exit(usage);
      }
    }
    return new BenchOptions(quick, large, json);
  }

  private static void exit(String usage) {
    System.err.println("usage: " + usage);
    System.exit(2);
  }
}
