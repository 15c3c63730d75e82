package dev.paddock.agent.core;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The signals clients may send to commands and terminals, with their Linux numbers. One table for
 * every route, so a name means the same wherever it is sent.
 */
public enum Signal {
  HUP(1),
  INT(2),
  QUIT(3),
  KILL(9),
  USR1(10),
  USR2(12),
  TERM(15),
  CONT(18),
  STOP(19),
  TSTP(20),
  WINCH(28);

  private final int number;

  Signal(int number) {
    this.number = number;
  }

  /** The Linux signal number. */
  public int number() {
    return number;
  }

  /**
   * The signal {@code text} names: {@code INT}, {@code SIGINT} (any case) or {@code 2}. Nothing
   * else: no surrounding whitespace or trailing bytes, so what is accepted is exactly what is sent.
   */
  public static Optional<Signal> parse(String text) {
    String upper = text.toUpperCase(Locale.ROOT);
    String bare = upper.startsWith("SIG") ? upper.substring(3) : upper;
    return Arrays.stream(values())
        .filter(s -> s.name().equals(bare) || Integer.toString(s.number).equals(text))
        .findFirst();
  }

  /** The names clients may send, for error messages. */
  public static String names() {
    return Arrays.stream(values()).map(Enum::name).sorted().collect(Collectors.joining(", "));
  }
}
