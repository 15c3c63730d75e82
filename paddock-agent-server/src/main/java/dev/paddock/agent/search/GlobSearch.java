package dev.paddock.agent.search;

import dev.paddock.agent.files.Globs;
import java.io.IOException;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One {@code glob}: a depth-first walk in name order on the request's thread, writing every entry
 * whose path from the top matches the pattern, pruning directories no match can lie below (a
 * pattern's leading names, and its depth when it has no {@code **}). Stops at {@code limit} entries
 * or the deadline.
 */
final class GlobSearch {
  private final SearchTree tree;
  private final Pattern pattern;
  private final List<Pattern> segments;
  private final boolean deep;
  private final int limit;
  private final long deadlineNanos;

  GlobSearch(SearchTree tree, String glob, int limit, long deadlineNanos) {
    this.tree = tree;
    this.pattern = Globs.compile(glob, true);
    List<Pattern> compiled = new ArrayList<>();
    boolean doubleStar = false;
    for (String segment : glob.split("/")) {
      if (segment.contains("**")) {
        doubleStar = true;
        break;
      }
      compiled.add(Globs.compile(segment, true));
    }
    this.segments = List.copyOf(compiled);
    this.deep = doubleStar;
    this.limit = limit;
    this.deadlineNanos = deadlineNanos;
  }

  /** Whether something below the directory at {@code relative} (no trailing /) can match. */
  boolean mayHoldMatches(String relative) {
    String[] names = relative.split("/");
    if (!deep && names.length >= segments.size()) {
      return false;
    }
    for (int i = 0; i < names.length && i < segments.size(); i++) {
      if (!segments.get(i).matcher(names[i]).matches()) {
        return false;
      }
    }
    return true;
  }

  void run(SearchTree.Dir top, NdjsonOut out, long startedNanos) throws IOException {
    record Frame(SearchTree.Dir dir, Iterator<SearchTree.Entry> entries) {}
    Deque<Frame> stack = new ArrayDeque<>();
    stack.push(new Frame(top, tree.children(top).iterator()));
    int found = 0;
    int directories = 1;
    boolean truncated = false;
    boolean timedOut = false;
    List<Map<String, Object>> batch = new ArrayList<>();
    while (!stack.isEmpty()) {
      if (System.nanoTime() - deadlineNanos > 0) {
        timedOut = true;
        break;
      }
      Frame frame = stack.peek();
      if (!frame.entries().hasNext()) {
        stack.pop();
        continue;
      }
      SearchTree.Entry entry = frame.entries().next();
      if (pattern.matcher(entry.relative()).matches()) {
        if (found == limit) {
          truncated = true;
          break;
        }
        found++;
        batch.add(line(entry));
        if (batch.size() >= 256) {
          out.write(batch);
          batch.clear();
        }
      }
      if (entry.isDirectory() && mayHoldMatches(entry.relative())) {
        SearchTree.Dir dir = tree.enter(frame.dir(), entry);
        directories++;
        stack.push(new Frame(dir, tree.children(dir).iterator()));
      }
    }
    out.write(batch);
    Map<String, Object> summary = new LinkedHashMap<>();
    summary.put("type", "summary");
    summary.put("matches", found);
    summary.put("directories_scanned", directories);
    summary.put("truncated", truncated);
    summary.put("timed_out", timedOut);
    summary.put("duration_ms", (System.nanoTime() - startedNanos) / 1_000_000);
    out.finish(summary);
  }

  private static Map<String, Object> line(SearchTree.Entry entry) {
    BasicFileAttributes attributes = entry.attributes();
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("path", entry.path().toString());
    line.put("type", typeOf(attributes));
    line.put("size", attributes.size());
    line.put("mtime", Instant.ofEpochMilli(attributes.lastModifiedTime().toMillis()).toString());
    return line;
  }

  static String typeOf(BasicFileAttributes attributes) {
    if (attributes.isSymbolicLink()) {
      return "symlink";
    }
    if (attributes.isDirectory()) {
      return "directory";
    }
    return attributes.isRegularFile() ? "file" : "other";
  }
}
