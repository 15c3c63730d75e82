package dev.paddock.api.settings;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Declared settings resolved against their sources, with provenance. A flag overrides the
 * environment, which overrides the config file, which overrides the default; within one source a
 * setting's declared name wins over its aliases. Every value present is parsed when the settings
 * are built, so a bad one stops start-up there with its name, its value and what is allowed.
 * Immutable and thread-safe.
 *
 * <p>Names under the prefixes Paddock owns ({@code PADDOCK_}, {@code RUNTIME_}, {@code docker.},
 * {@code process.}, {@code ssh.}, {@code kubernetes.}) that nothing declares are not errors
 * (another version may know them) but {@linkplain #warnings() warnings} naming the closest declared
 * setting.
 */
public final class Settings {
  /** The prefixes whose unknown names are warned about. */
  public static final List<String> CHECKED_PREFIXES =
      List.of("PADDOCK_", "RUNTIME_", "docker.", "process.", "ssh.", "kubernetes.");

  private static final String SECRET = "(secret)";

  private final Map<String, Setting<?>> declared;
  private final Map<String, Resolved> resolved;
  private final Map<String, String> values;
  private final List<String> warnings;

  private Settings(
      Map<String, Setting<?>> declared,
      Map<String, Resolved> resolved,
      Map<String, String> values,
      List<String> warnings) {
    this.declared = declared;
    this.resolved = resolved;
    this.values = values;
    this.warnings = warnings;
  }

  /** A builder with no declarations and no sources. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * {@code declared} resolved against one map of values (reported as {@link SettingSource#ENV}):
   * how a component parses the flattened settings it is handed.
   *
   * @throws SettingsException when a value is invalid
   */
  public static Settings of(Collection<? extends Setting<?>> declared, Map<String, String> values) {
    return builder().declare(declared).source(SettingSource.ENV, values).build();
  }

  /**
   * The value of {@code setting}, else its default.
   *
   * @throws IllegalArgumentException when it was not declared here
   */
  public <T> Optional<T> find(Setting<T> setting) {
    @SuppressWarnings("unchecked")
    Optional<T> value = (Optional<T>) resolvedOf(setting).value();
    return value;
  }

  /**
   * The value of {@code setting}, else its default.
   *
   * @throws IllegalStateException when it has neither; the message names it
   */
  public <T> T get(Setting<T> setting) {
    return find(setting)
        .orElseThrow(() -> new IllegalStateException(setting.name() + " is not set"));
  }

  /** Where the value of {@code setting} came from. */
  public SettingSource source(Setting<?> setting) {
    return resolvedOf(setting).source();
  }

  /**
   * Every value of every source, flattened (higher sources win), with each declared setting under
   * its declared name only: what components that take a settings map are handed.
   */
  public Map<String, String> values() {
    return values;
  }

  /** Unknown names under the checked prefixes, each with the closest declared name. */
  public List<String> warnings() {
    return warnings;
  }

  /** Every declared setting, in declaration order, with its shown value and where it came from. */
  public List<Effective> effective() {
    List<Effective> all = new ArrayList<>();
    for (Setting<?> setting : declared.values()) {
      all.add(effective(setting));
    }
    return all;
  }

  /** One declared setting as {@code paddock config} shows it; secrets are redacted. */
  public Effective effective(Setting<?> setting) {
    Resolved r = resolvedOf(setting);
    return new Effective(setting.name(), shown(setting, r), r.source(), r.givenAs());
  }

  private static <T> String shown(Setting<T> setting, Resolved r) {
    if (r.value().isEmpty()) {
      return "(unset)";
    }
    @SuppressWarnings("unchecked")
    T value = (T) r.value().get();
    if (setting.isFamily()) {
      return familyText(setting, (Map<?, ?>) value);
    }
    if (setting.isSecret() && r.source() != SettingSource.DEFAULT) {
      return SECRET;
    }
    String text = setting.print(value);
    return text.isEmpty() ? "\"\"" : text;
  }

  private static String familyText(Setting<?> setting, Map<?, ?> members) {
    if (members.isEmpty()) {
      return "(none)";
    }
    List<String> parts = new ArrayList<>();
    members.forEach(
        (k, v) -> parts.add(setting.name() + k + "=" + (setting.isSecret() ? SECRET : v)));
    return String.join(", ", parts);
  }

  private Resolved resolvedOf(Setting<?> setting) {
    Resolved r = resolved.get(setting.name());
    if (r == null) {
      throw new IllegalArgumentException(setting.name() + " is not declared in these settings");
    }
    return r;
  }

  /**
   * A declared setting's effective value as shown to the operator.
   *
   * @param name the declared name
   * @param value the value as written ({@code (secret)} for a secret that is set, {@code (unset)}
   *     when there is neither a value nor a default, {@code ""} for empty text)
   * @param source where it came from
   * @param givenAs the name it was given under (an alias, or for a default the declared name)
   */
  public record Effective(String name, String value, SettingSource source, String givenAs) {
    public Effective {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(value, "value");
      Objects.requireNonNull(source, "source");
      Objects.requireNonNull(givenAs, "givenAs");
    }
  }

  private record Resolved(Optional<?> value, SettingSource source, String givenAs) {}

  /** Builder; not thread-safe. */
  public static final class Builder {
    private final Map<String, Setting<?>> declared = new LinkedHashMap<>();
    private final Map<SettingSource, Map<String, String>> sources =
        new EnumMap<>(SettingSource.class);
    private final Set<String> knownElsewhere = new LinkedHashSet<>();

    private Builder() {}

    /**
     * Declares settings. A name declared twice must be the same declaration's.
     *
     * @throws IllegalArgumentException when a name is declared twice differently
     */
    public Builder declare(Collection<? extends Setting<?>> settings) {
      for (Setting<?> setting : settings) {
        Setting<?> before = declared.putIfAbsent(setting.name(), setting);
        if (before != null && before != setting) {
          throw new IllegalArgumentException(setting.name() + " is declared twice");
        }
      }
      return this;
    }

    /** Adds the values of one source (a later call for the same source adds to it). */
    public Builder source(SettingSource source, Map<String, String> values) {
      if (source == SettingSource.DEFAULT) {
        throw new IllegalArgumentException("defaults come from the declarations");
      }
      sources.computeIfAbsent(source, s -> new LinkedHashMap<>()).putAll(values);
      return this;
    }

    /**
     * Names (or prefixes ending in {@code _} or {@code .}) read by other programs, such as the
     * CLI's {@code PADDOCK_URL}: never warned about.
     */
    public Builder knownElsewhere(Collection<String> names) {
      knownElsewhere.addAll(names);
      return this;
    }

    /**
     * Resolves and parses every declared setting.
     *
     * @throws SettingsException listing every invalid value
     */
    public Settings build() {
      Map<String, Resolved> resolved = new LinkedHashMap<>();
      List<String> problems = new ArrayList<>();
      for (Setting<?> setting : declared.values()) {
        resolved.put(setting.name(), resolve(setting, problems));
      }
      if (!problems.isEmpty()) {
        throw new SettingsException(problems);
      }
      return new Settings(
          Map.copyOf(declared), Map.copyOf(resolved), flattened(), List.copyOf(unknownNames()));
    }

    private Resolved resolve(Setting<?> setting, List<String> problems) {
      if (setting.isFamily()) {
        return family(setting);
      }
      for (SettingSource source : highestFirst()) {
        Map<String, String> values = sources.get(source);
        for (String name : namesOf(setting)) {
          String text = values.get(name);
          if (text != null && !text.isBlank()) {
            return parsed(setting, text, source, name, problems);
          }
        }
      }
      return new Resolved(setting.defaultValue(), SettingSource.DEFAULT, setting.name());
    }

    private static Resolved parsed(
        Setting<?> setting, String text, SettingSource source, String name, List<String> problems) {
      try {
        return new Resolved(Optional.of(setting.parse(text)), source, name);
      } catch (IllegalArgumentException e) {
        String shown = setting.isSecret() ? SECRET : "'" + text + "'";
        String why = e.getMessage() == null ? setting.allowed() : e.getMessage();
        problems.add(
            name + "=" + shown + " (from " + source.label() + ") is invalid: expected " + why);
        return new Resolved(Optional.empty(), source, name);
      }
    }

    private Resolved family(Setting<?> setting) {
      Map<String, String> members = new TreeMap<>();
      SettingSource from = SettingSource.DEFAULT;
      for (SettingSource source : lowestFirst()) {
        for (Map.Entry<String, String> e : sources.get(source).entrySet()) {
          String key = e.getKey();
          if (key.startsWith(setting.name()) && key.length() > setting.name().length()) {
            members.put(key.substring(setting.name().length()), e.getValue());
            from = source;
          }
        }
      }
      return new Resolved(Optional.of(Map.copyOf(members)), from, setting.name());
    }

    private List<SettingSource> highestFirst() {
      List<SettingSource> order = new ArrayList<>(lowestFirst());
      Collections.reverse(order);
      return order;
    }

    private List<SettingSource> lowestFirst() {
      return new ArrayList<>(sources.keySet());
    }

    private static List<String> namesOf(Setting<?> setting) {
      List<String> names = new ArrayList<>();
      names.add(setting.name());
      names.addAll(setting.aliases());
      return names;
    }

    private Map<String, String> flattened() {
      Map<String, String> flat = new LinkedHashMap<>();
      for (SettingSource source : lowestFirst()) {
        flat.putAll(sources.get(source));
      }
      for (Setting<?> setting : declared.values()) {
        if (setting.isFamily()) {
          continue;
        }
        Optional<String> winner = winningText(setting);
        namesOf(setting).forEach(flat::remove);
        winner.ifPresent(text -> flat.put(setting.name(), text));
      }
      return Map.copyOf(flat);
    }

    private Optional<String> winningText(Setting<?> setting) {
      for (SettingSource source : highestFirst()) {
        for (String name : namesOf(setting)) {
          String text = sources.get(source).get(name);
          if (text != null && !text.isBlank()) {
            return Optional.of(text);
          }
        }
      }
      return Optional.empty();
    }

    private Set<String> unknownNames() {
      Set<String> warnings = new LinkedHashSet<>();
      Set<String> seen = new LinkedHashSet<>();
      for (SettingSource source : lowestFirst()) {
        for (String key : sources.get(source).keySet()) {
          if (checked(key) && !known(key) && seen.add(key)) {
            warnings.add(unknown(key, source));
          }
        }
      }
      return warnings;
    }

    private static boolean checked(String key) {
      return key.equals("RUNTIME") || CHECKED_PREFIXES.stream().anyMatch(key::startsWith);
    }

    private boolean known(String key) {
      for (Setting<?> setting : declared.values()) {
        if (setting.isFamily() ? key.startsWith(setting.name()) : namesOf(setting).contains(key)) {
          return true;
        }
      }
      return knownElsewhere.stream()
          .anyMatch(
              n -> n.equals(key) || ((n.endsWith("_") || n.endsWith(".")) && key.startsWith(n)));
    }

    private String unknown(String key, SettingSource source) {
      String text = "unknown setting " + key + " (from " + source.label() + ")";
      return closest(key).map(name -> text + "; did you mean " + name + "?").orElse(text);
    }

    /** The declared name (or alias) nearest to {@code key}, if it is near enough to be a typo. */
    private Optional<String> closest(String key) {
      String target = normalised(key);
      String best = null;
      int bestDistance = Integer.MAX_VALUE;
      for (Setting<?> setting : declared.values()) {
        for (String name : namesOf(setting)) {
          int d = EditDistance.between(target, normalised(name));
          if (d < bestDistance) {
            best = name;
            bestDistance = d;
          }
        }
      }
      int allowed = Math.max(2, target.length() / 4);
      return bestDistance <= allowed ? Optional.ofNullable(best) : Optional.empty();
    }

    /** Case and the separators {@code . - _} do not count as differences. */
    private static String normalised(String name) {
      return name.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }
  }
}
