package dev.paddock.api.settings;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One declared setting: its name (and older names it is also read under), how its value is written
 * and parsed, its default and what it does. Declared next to the component that reads it and
 * resolved by {@link Settings}. Immutable; the {@code with*} methods return a copy.
 *
 * <p>Every value is written one way everywhere: booleans {@code true/false/yes/no/on/off/1/0} (any
 * case), durations {@code 30} (seconds), {@code 30s}, {@code 5m}, {@code 1h}, {@code 500ms} or
 * ISO-8601, sizes {@code 512m}, {@code 2g}, {@code 2GiB} or bytes. A blank value counts as unset.
 *
 * @param <T> the parsed type
 */
public final class Setting<T> {
  private final String name;
  private final List<String> aliases;
  private final String description;
  private final String allowed;
  private final Function<String, T> parser;
  private final Function<T, String> printer;
  private final Optional<T> defaultValue;
  private final Optional<String> defaultText;
  private final boolean secret;
  private final boolean family;

  private Setting(
      String name,
      List<String> aliases,
      String description,
      String allowed,
      Function<String, T> parser,
      Function<T, String> printer,
      Optional<T> defaultValue,
      Optional<String> defaultText,
      boolean secret,
      boolean family) {
    this.name = Objects.requireNonNull(name, "name");
    this.aliases = List.copyOf(aliases);
    this.description = Objects.requireNonNull(description, "description");
    this.allowed = Objects.requireNonNull(allowed, "allowed");
    this.parser = Objects.requireNonNull(parser, "parser");
    this.printer = Objects.requireNonNull(printer, "printer");
    this.defaultValue = Objects.requireNonNull(defaultValue, "defaultValue");
    this.defaultText = Objects.requireNonNull(defaultText, "defaultText");
    this.secret = secret;
    this.family = family;
  }

  /**
   * A setting parsed by {@code parser}, which throws {@link IllegalArgumentException} for a value
   * it refuses (its message, if any, is added to {@code allowed} in the error).
   *
   * @param allowed what may be written, for errors and help (e.g. "uid:gid, e.g. 1000:1000")
   */
  public static <T> Setting<T> of(
      String name, String description, String allowed, Function<String, T> parser) {
    return new Setting<>(
        name,
        List.of(),
        description,
        allowed,
        parser,
        String::valueOf,
        Optional.empty(),
        Optional.empty(),
        false,
        false);
  }

  /** Any text (trimmed). */
  public static Setting<String> string(String name, String description) {
    return of(name, description, "any text", String::trim);
  }

  /** {@code true/false/yes/no/on/off/1/0}, any case. */
  public static Setting<Boolean> bool(String name, String description) {
    return of(name, description, Values.BOOLEAN, Values::bool);
  }

  /** A whole number from {@code min} to {@code max}. */
  public static Setting<Integer> integer(String name, String description, int min, int max) {
    return of(
        name,
        description,
        Values.wholeNumber(min, max),
        text -> (int) Values.integer(text, min, max));
  }

  /** A number greater than {@code exclusiveMin}, fractions allowed. */
  public static Setting<Double> decimal(String name, String description, double exclusiveMin) {
    return of(
        name,
        description,
        Values.decimalAllowed(exclusiveMin),
        t -> Values.decimal(t, exclusiveMin));
  }

  /** {@code 30} (seconds), {@code 30s}, {@code 5m}, {@code 1h}, {@code 500ms}, ISO-8601. */
  public static Setting<Duration> duration(String name, String description) {
    return of(name, description, Values.DURATION, Values::duration)
        .withPrinter(Setting::printDuration);
  }

  /** Bytes: {@code 512m}, {@code 2g}, {@code 2GiB}, a count; {@code 0} or {@code none} is 0. */
  public static Setting<Long> size(String name, String description) {
    return of(name, description, Values.SIZE, Values::size).withPrinter(Setting::printSize);
  }

  /** Words separated by commas or white space. */
  public static Setting<List<String>> list(String name, String description) {
    return of(name, description, "words separated by commas or spaces", Values::words)
        .withPrinter(words -> String.join(",", words));
  }

  /** A file-system path. */
  public static Setting<Path> path(String name, String description) {
    return of(name, description, "a path", text -> Path.of(text.trim()));
  }

  /** One of {@code choices} (any case; the value is the choice as declared). */
  public static Setting<String> oneOf(String name, String description, String... choices) {
    List<String> known = List.of(choices);
    String allowed = "one of " + String.join(", ", known);
    return of(
        name,
        description,
        allowed,
        text -> {
          String t = text.trim().toLowerCase(Locale.ROOT);
          return known.stream()
              .filter(c -> c.toLowerCase(Locale.ROOT).equals(t))
              .findFirst()
              .orElseThrow(() -> new IllegalArgumentException(allowed));
        });
  }

  /**
   * A family of settings named {@code prefix<NAME>}, read together as a map from {@code NAME} to
   * value (e.g. {@code docker.spec.env.} for every spec's environment).
   */
  public static Setting<Map<String, String>> family(String prefix, String description) {
    return new Setting<>(
        prefix,
        List.of(),
        description,
        "any text per name",
        text -> Map.of(),
        map -> String.join(",", map.keySet()),
        Optional.empty(),
        Optional.of("none"),
        false,
        true);
  }

  /** This setting, also read under {@code older} names (the declared name wins in one source). */
  public Setting<T> withAliases(String... older) {
    List<String> all = new ArrayList<>(aliases);
    all.addAll(List.of(older));
    return new Setting<>(
        name,
        all,
        description,
        allowed,
        parser,
        printer,
        defaultValue,
        defaultText,
        secret,
        family);
  }

  /** This setting with a default, used when no source sets it. */
  public Setting<T> withDefault(T value) {
    return new Setting<>(
        name,
        aliases,
        description,
        allowed,
        parser,
        printer,
        Optional.of(value),
        Optional.of(printer.apply(value)),
        secret,
        family);
  }

  /**
   * This setting with a default that is worked out elsewhere (e.g. "a digest of the data
   * directory"), shown in help only.
   */
  public Setting<T> withDefaultText(String text) {
    return new Setting<>(
        name,
        aliases,
        description,
        allowed,
        parser,
        printer,
        defaultValue,
        Optional.of(text),
        secret,
        family);
  }

  /** A secret: its value is never shown by {@code paddock config}, in errors or in logs. */
  public Setting<T> secret() {
    return new Setting<>(
        name,
        aliases,
        description,
        allowed,
        parser,
        printer,
        defaultValue,
        defaultText,
        true,
        family);
  }

  /**
   * The value must also pass {@code check}; {@code allowed} replaces the written form in errors.
   */
  public Setting<T> requiring(Predicate<T> check, String allowed) {
    Function<String, T> base = parser;
    Function<String, T> checked =
        text -> {
          T value = base.apply(text);
          if (!check.test(value)) {
            throw new IllegalArgumentException(allowed);
          }
          return value;
        };
    return new Setting<>(
        name,
        aliases,
        description,
        allowed,
        checked,
        printer,
        defaultValue,
        defaultText,
        secret,
        family);
  }

  private Setting<T> withPrinter(Function<T, String> print) {
    return new Setting<>(
        name,
        aliases,
        description,
        allowed,
        parser,
        print,
        defaultValue,
        defaultText,
        secret,
        family);
  }

  /** The name (for a family, its prefix). */
  public String name() {
    return name;
  }

  /** Older names also read. */
  public List<String> aliases() {
    return aliases;
  }

  /** What the setting does. */
  public String description() {
    return description;
  }

  /** What may be written. */
  public String allowed() {
    return allowed;
  }

  /** The default, if one is declared. */
  public Optional<T> defaultValue() {
    return defaultValue;
  }

  /** The default as help shows it ("none" when there is none). */
  public String defaultText() {
    return defaultText.orElse("none");
  }

  public boolean isSecret() {
    return secret;
  }

  /** Whether this declares a family of names sharing the prefix {@link #name()}. */
  public boolean isFamily() {
    return family;
  }

  /**
   * The flag that sets it: {@code PADDOCK_MAX_SANDBOXES} is {@code --max-sandboxes}, {@code
   * docker.memory} is {@code --docker-memory}, {@code RUNTIME} is {@code --runtime}.
   */
  public String flag() {
    String n = name.startsWith("PADDOCK_") ? name.substring("PADDOCK_".length()) : name;
    return "--" + n.toLowerCase(Locale.ROOT).replace('_', '-').replace('.', '-');
  }

  /**
   * Parses {@code text} (not blank).
   *
   * @throws IllegalArgumentException saying what is allowed
   */
  public T parse(String text) {
    return parser.apply(text);
  }

  /** The value as it would be written, for {@code paddock config}. */
  String print(T value) {
    return printer.apply(value);
  }

  @Override
  public String toString() {
    return "Setting[" + name + "]";
  }

  private static String printDuration(Duration d) {
    if (d.toMillisPart() != 0 || d.isZero()) {
      return d.toMillis() + "ms";
    }
    long s = d.toSeconds();
    if (s % 3600 == 0) {
      return s / 3600 + "h";
    }
    return s % 60 == 0 ? s / 60 + "m" : s + "s";
  }

  private static String printSize(long bytes) {
    String[] units = {"", "k", "m", "g", "t"};
    int i = 0;
    long n = bytes;
    while (i < units.length - 1 && n != 0 && n % 1024 == 0) {
      n /= 1024;
      i++;
    }
    return n + units[i];
  }
}
