package dev.paddock.agent.search;

import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.files.Globs;
import dev.paddock.agent.files.SafeFs;
import dev.paddock.agent.user.CommandUser;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.JsonBody;
import dev.paddock.http.Router;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * {@code POST /api/file/glob} and {@code POST /api/file/grep}: searches under a directory that
 * stream NDJSON results and end with a summary line, bounded in count and time. The directory goes
 * through the allowed roots ({@link SafeFs}); the walk never follows a link, and reads directories
 * and files only through descriptors reached without one ({@link SearchTree}), so nothing outside
 * it is reported, even while code in the sandbox swaps directories for links.
 */
public final class SearchRoutes {
  static final int DEFAULT_LIMIT = 1000;
  static final int MAX_LIMIT = 100_000;
  static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
  static final long MAX_TIMEOUT_MILLIS = 600_000;

  private static final Set<String> GLOB_FIELDS =
      Set.of("path", "pattern", "limit", "timeout_ms", "gitignore", "hidden");

  private static final Set<String> GREP_FIELDS =
      Set.of(
          "path",
          "pattern",
          "fixed_strings",
          "case_insensitive",
          "include",
          "exclude",
          "context",
          "before_context",
          "after_context",
          "max_results",
          "max_per_file",
          "max_line_chars",
          "gitignore",
          "hidden",
          "timeout_ms");

  private final SafeFs fs;

  private SearchRoutes(SafeFs fs) {
    this.fs = fs;
  }

  /** Registers the routes; they only read, but files are checked as {@code user} would be. */
  public static void register(Router router, AgentConfig config, CommandUser user) {
    SearchRoutes routes = new SearchRoutes(SafeFs.create(config.fileRoots(), user));
    router.add("POST", "/api/file/glob", routes::glob).add("POST", "/api/file/grep", routes::grep);
  }

  private void glob(Call call) throws IOException {
    long started = System.nanoTime();
    call.allowQuery(Set.of());
    JsonBody body = call.jsonBody(GLOB_FIELDS);
    Path top = directory(body);
    String pattern = relativePattern(body.requiredString("pattern"), top);
    int limit = number(body, "limit", 1, MAX_LIMIT, DEFAULT_LIMIT);
    long deadline = started + timeout(body).toNanos();
    SearchTree.Walk walk =
        SearchTree.from(
            fs,
            top,
            body.optionalBoolean("hidden").orElse(false),
            body.optionalBoolean("gitignore").orElse(true),
            entry -> false);
    try (NdjsonOut out = new NdjsonOut(call)) {
      new GlobSearch(walk.tree(), pattern, limit, deadline).run(walk.top(), out, started);
    }
  }

  private void grep(Call call) throws IOException, InterruptedException {
    long started = System.nanoTime();
    call.allowQuery(Set.of());
    JsonBody body = call.jsonBody(GREP_FIELDS);
    String raw = body.requiredString("path");
    boolean isDirectory = typeOf(raw) == SafeFs.FileType.DIRECTORY;
    Path top = fs.realPath(raw);
    String pattern = body.requiredString("pattern");
    boolean fixed = body.optionalBoolean("fixed_strings").orElse(false);
    LineFinder finder =
        finder(pattern, fixed, body.optionalBoolean("case_insensitive").orElse(false));
    int context = number(body, "context", 0, 50, 0);
    FileGrep.Options options =
        new FileGrep.Options(
            number(body, "before_context", 0, 50, context),
            number(body, "after_context", 0, 50, context),
            number(body, "max_line_chars", 20, 10_000, 500));
    int maxResults = number(body, "max_results", 1, MAX_LIMIT, DEFAULT_LIMIT);
    int maxPerFile = number(body, "max_per_file", 1, MAX_LIMIT, maxResults);
    List<Glob> include = globs(body, "include");
    List<Glob> exclude = globs(body, "exclude");
    Predicate<SearchTree.Entry> excluded = entry -> matchesAny(exclude, entry);
    SearchTree.Walk walk =
        SearchTree.from(
            fs,
            isDirectory ? top : top.getParent(),
            body.optionalBoolean("hidden").orElse(false),
            body.optionalBoolean("gitignore").orElse(true),
            excluded);
    Predicate<SearchTree.Entry> wanted =
        entry -> (include.isEmpty() || matchesAny(include, entry)) && !excluded.test(entry);
    long deadline = started + timeout(body).toNanos();
    try (NdjsonOut out = new NdjsonOut(call)) {
      GrepSearch search =
          new GrepSearch(
              walk.tree(), finder, options, wanted, maxResults, maxPerFile, deadline, out);
      search.run(isDirectory ? walk.top() : top, started);
    }
  }

  private Path directory(JsonBody body) throws IOException {
    String raw = body.requiredString("path");
    if (typeOf(raw) != SafeFs.FileType.DIRECTORY) {
      throw HttpError.badRequest("'" + fs.realPath(raw) + "' is not a directory");
    }
    return fs.realPath(raw);
  }

  /** What {@code raw} is (a final link followed); 400 unless a regular file or a directory. */
  private SafeFs.FileType typeOf(String raw) throws IOException {
    SafeFs.FileEntry entry = fs.stat(raw, true);
    if (entry.type() != SafeFs.FileType.DIRECTORY && entry.type() != SafeFs.FileType.FILE) {
      throw HttpError.badRequest("'" + entry.path() + "' is not a regular file or a directory");
    }
    return entry.type();
  }

  /** The pattern relative to {@code top}; an absolute one must lie under it. */
  private static String relativePattern(String pattern, Path top) {
    if (pattern.isEmpty()) {
      throw HttpError.unprocessable("field 'pattern' must not be empty");
    }
    if (!pattern.startsWith("/")) {
      return pattern;
    }
    String prefix = top.toString().endsWith("/") ? top.toString() : top + "/";
    if (!pattern.startsWith(prefix)) {
      throw HttpError.unprocessable(
          "an absolute pattern must start with the searched directory " + prefix);
    }
    return pattern.substring(prefix.length());
  }

  private static LineFinder finder(String pattern, boolean fixed, boolean caseInsensitive) {
    if (pattern.isEmpty()) {
      throw HttpError.unprocessable("field 'pattern' must not be empty");
    }
    if (pattern.indexOf('\n') >= 0) {
      throw HttpError.unprocessable(
          "field 'pattern' must not contain a newline: lines are searched one by one");
    }
    try {
      return LineFinder.of(pattern, fixed, caseInsensitive);
    } catch (PatternSyntaxException e) {
      throw HttpError.unprocessable(
          "invalid regular expression: "
              + e.getDescription()
              + " near index "
              + e.getIndex()
              + " of '"
              + pattern
              + "' (set fixed_strings to search for it literally)");
    }
  }

  /** A file filter: {@code byPath} when the glob names directories too. */
  private record Glob(Pattern pattern, boolean byPath) {}

  private static List<Glob> globs(JsonBody body, String field) {
    return body.optionalStringList(field).orElse(List.of()).stream()
        .filter(glob -> !glob.isBlank())
        .map(glob -> glob.startsWith("/") ? glob.substring(1) : glob)
        .map(glob -> new Glob(Globs.compile(glob, true), glob.contains("/")))
        .toList();
  }

  /** As ripgrep's {@code -g}: a glob with a {@code /} matches the relative path, else the name. */
  private static boolean matchesAny(List<Glob> globs, SearchTree.Entry entry) {
    String relative = entry.relative();
    String name = relative.substring(relative.lastIndexOf('/') + 1);
    for (Glob glob : globs) {
      if (glob.pattern().matcher(glob.byPath() ? relative : name).matches()) {
        return true;
      }
    }
    return false;
  }

  private static int number(JsonBody body, String field, int min, int max, int fallback) {
    return body.optionalLong(field, min, max).map(Long::intValue).orElse(fallback);
  }

  private static Duration timeout(JsonBody body) {
    return body.optionalLong("timeout_ms", 1, MAX_TIMEOUT_MILLIS)
        .map(Duration::ofMillis)
        .orElse(DEFAULT_TIMEOUT);
  }
}
