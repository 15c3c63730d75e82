package dev.paddock.bench;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The figures of one run and the facts needed to read them (JDK, cores, AOT cache, quick or full),
 * printed as a table and optionally written as JSON. Not thread-safe.
 */
final class Report {
  private final Map<String, String> context;
  private final List<Figure> figures = new ArrayList<>();

  Report(Map<String, String> context) {
    this.context = Map.copyOf(context);
  }

  void add(Figure figure) {
    figures.add(figure);
  }

  List<Figure> figures() {
    return List.copyOf(figures);
  }

  void print(PrintStream out) {
    context.entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .forEach(e -> out.printf("%-10s %s%n", e.getKey() + ":", e.getValue()));
    out.println();
    String row = "%-44s %14s %10s %8s %10s  %-5s  %s%n";
    out.printf(row, "figure", "value", "baseline", "ratio", "target", "", "baseline is");
    out.println("-".repeat(130));
    for (Figure f : figures) {
      out.printf(
          row,
          f.name(),
          number(f.value()) + " " + f.unit(),
          number(f.baseline()),
          ratio(f.ratio()),
          f.target().map(t -> (t.atMost() ? "<= " : ">= ") + number(t.limit())).orElse("-"),
          f.verdict(),
          f.baselineName());
    }
    long misses = figures.stream().filter(f -> f.verdict().equals("MISS")).count();
    out.println();
    out.println(
        misses == 0 ? "every target met" : misses + " target(s) missed; see docs/BENCHMARKS.md");
  }

  void writeJson(Path file) throws IOException {
    try (JsonGenerator g =
        new JsonFactory()
            .createGenerator(file.toFile(), JsonEncoding.UTF8)
            .useDefaultPrettyPrinter()) {
      g.writeStartObject();
      g.writeObjectFieldStart("context");
      for (Map.Entry<String, String> e : context.entrySet()) {
        g.writeStringField(e.getKey(), e.getValue());
      }
      g.writeEndObject();
      g.writeArrayFieldStart("figures");
      for (Figure f : figures) {
        writeFigure(g, f);
      }
      g.writeEndArray();
      g.writeEndObject();
    }
  }

  private static void writeFigure(JsonGenerator g, Figure f) throws IOException {
    g.writeStartObject();
    g.writeStringField("name", f.name());
    g.writeStringField("unit", f.unit());
    g.writeNumberField("value", f.value());
    g.writeNumberField("baseline", f.baseline());
    g.writeStringField("baseline_is", f.baselineName());
    g.writeNumberField("ratio", f.ratio());
    if (f.target().isPresent()) {
      g.writeStringField("target", f.target().get().atMost() ? "at_most" : "at_least");
      g.writeNumberField("target_value", f.target().get().limit());
    }
    g.writeStringField("result", f.verdict());
    g.writeEndObject();
  }

  private static String number(double v) {
    if (Double.isNaN(v)) {
      return "-";
    }
    double abs = Math.abs(v);
    String pattern = abs >= 100 ? "%.0f" : abs >= 10 ? "%.1f" : abs >= 1 ? "%.2f" : "%.3f";
    return String.format(Locale.ROOT, pattern, v);
  }

  private static String ratio(double r) {
    return Double.isNaN(r) ? "-" : String.format(Locale.ROOT, "%.2fx", r);
  }
}
