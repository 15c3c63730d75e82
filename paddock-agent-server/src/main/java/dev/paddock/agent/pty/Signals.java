package dev.paddock.agent.pty;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** Signal names clients may send ("INT", "SIGINT", "2") and their Linux numbers. */
final class Signals {
  static final int HUP = 1;
  static final int KILL = 9;

  private static final Map<String, Integer> NUMBERS =
      Map.ofEntries(
          Map.entry("HUP", 1),
          Map.entry("INT", 2),
          Map.entry("QUIT", 3),
          Map.entry("KILL", 9),
          Map.entry("USR1", 10),
          Map.entry("USR2", 12),
          Map.entry("TERM", 15),
          Map.entry("CONT", 18),
          Map.entry("STOP", 19),
          Map.entry("TSTP", 20),
          Map.entry("WINCH", 28));

  private Signals() {}

  /** The number of {@code name}, or empty when it is not one clients may send. */
  static Optional<Integer> number(String name) {
    String upper = name.trim().toUpperCase(Locale.ROOT);
    if (upper.startsWith("SIG")) {
      upper = upper.substring(3);
    }
    if (NUMBERS.containsKey(upper)) {
      return Optional.of(NUMBERS.get(upper));
    }
    for (int n : NUMBERS.values()) {
      if (Integer.toString(n).equals(upper)) {
        return Optional.of(n);
      }
    }
    return Optional.empty();
  }

  static String names() {
    return String.join(", ", new java.util.TreeSet<>(NUMBERS.keySet()));
  }
}
