package dev.paddock.agent.files;

import java.util.List;

/**
 * The default archive excludes (OpenHands' list): build outputs, dependency folders, caches and
 * {@code .git}. Patterns are gitignore-like: a trailing {@code /} matches directories only, a
 * pattern with a {@code /} inside is anchored at the archive root, others match at any depth.
 */
public final class Excludes {
  public static final List<String> DEFAULTS =
      List.of(
          ".git/",
          "node_modules/",
          ".venv/",
          "venv/",
          "__pycache__/",
          ".mypy_cache/",
          ".pytest_cache/",
          ".ruff_cache/",
          "dist/",
          "build/",
          ".next/",
          "target/",
          "*.pyc");

  private Excludes() {}
}
