package dev.paddock.agent.search;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The ignore files in force in one directory of a walk: its own {@code .gitignore} on top of its
 * parents', each matched relative to its own directory; the deepest file that has an opinion
 * decides, as in git. An immutable linked list, shared by all directories below.
 */
final class Ignores {
  static final Ignores NONE = new Ignores(null, "", null);

  private final IgnoreRules rules;
  private final String base;
  private final Ignores parent;

  private Ignores(IgnoreRules rules, String base, Ignores parent) {
    this.rules = rules;
    this.base = base;
    this.parent = parent;
  }

  /**
   * These rules plus those of {@code dir}'s ignore files; {@code base} is {@code dir} relative to
   * the walk's top ({@code ""} for the top, else ending in {@code /}).
   */
  Ignores enter(Path dir, String base, boolean readExclude) {
    Ignores result = this;
    if (readExclude) {
      Optional<IgnoreRules> exclude = IgnoreRules.read(dir.resolve(".git/info/exclude"));
      if (exclude.isPresent()) {
        result = new Ignores(exclude.get(), base, result);
      }
    }
    Optional<IgnoreRules> own = IgnoreRules.read(dir.resolve(".gitignore"));
    return own.isPresent() ? new Ignores(own.get(), base, result) : result;
  }

  /** Whether {@code relative} (to the walk's top) is ignored. */
  boolean ignores(String relative, boolean directory) {
    for (Ignores level = this; level.rules != null; level = level.parent) {
      if (!relative.startsWith(level.base)) {
        continue;
      }
      Optional<Boolean> decision =
          level.rules.decide(relative.substring(level.base.length()), directory);
      if (decision.isPresent()) {
        return decision.get();
      }
    }
    return false;
  }
}
