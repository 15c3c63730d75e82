package dev.paddock.hardening;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code ```java} block in the README and {@code docs/} compiles against the product and the
 * test kits it names, so an example cannot drift from the code it shows. A block is a whole
 * compilation unit: its imports are part of the example.
 */
class DocsSnippetsTest {
  private static final Pattern BLOCK = Pattern.compile("(?ms)^```java\\n(.*?)^```");
  private static final Pattern TYPE_NAME =
      Pattern.compile(
          "(?m)^(?:public\\s+|abstract\\s+|final\\s+)*(?:class|interface|record|enum)\\s+(\\w+)");

  record Snippet(String doc, int index, String code) {
    String typeName() {
      Matcher m = TYPE_NAME.matcher(code);
      return m.find() ? m.group(1) : "Snippet" + index;
    }
  }

  @Test
  void everyJavaBlockInTheDocsCompiles(@TempDir Path out) throws IOException {
    List<Snippet> snippets = snippets();
    assertThat(snippets).isNotEmpty();
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();

    for (Snippet snippet : snippets) {
      JavaFileObject source =
          new SimpleJavaFileObject(
              URI.create("string:///" + snippet.typeName() + ".java"), JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
              return snippet.code();
            }
          };
      StringWriter errors = new StringWriter();
      List<String> options =
          List.of(
              "-classpath",
              System.getProperty("java.class.path"),
              "-d",
              out.toString(),
              "-proc:none",
              "--release",
              "21");
      boolean compiled = javac.getTask(errors, null, null, options, null, List.of(source)).call();
      assertThat(compiled)
          .as(snippet.doc() + " block " + snippet.index() + ":\n" + errors)
          .isTrue();
    }
  }

  private static List<Snippet> snippets() throws IOException {
    List<Path> docs = new ArrayList<>(List.of(SourceTree.root().resolve("README.md")));
    try (Stream<Path> files = Files.list(SourceTree.root().resolve("docs"))) {
      files.filter(f -> f.toString().endsWith(".md")).sorted().forEach(docs::add);
    }
    List<Snippet> found = new ArrayList<>();
    for (Path doc : docs) {
      Matcher m = BLOCK.matcher(Files.readString(doc));
      for (int i = 1; m.find(); i++) {
        found.add(new Snippet(SourceTree.root().relativize(doc).toString(), i, m.group(1)));
      }
    }
    return found;
  }
}
