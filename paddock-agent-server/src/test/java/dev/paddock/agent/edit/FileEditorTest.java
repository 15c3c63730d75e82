package dev.paddock.agent.edit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import java.io.BufferedWriter;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code POST /api/file/edit}: OpenHands' file editor commands over a real socket. */
class FileEditorTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private HttpResponse<String> edit(Object... fieldsAndValues) throws Exception {
    Map<String, Object> body = new LinkedHashMap<>();
    for (int i = 0; i < fieldsAndValues.length; i += 2) {
      body.put((String) fieldsAndValues[i], fieldsAndValues[i + 1]);
    }
    return agent.postJson("/api/file/edit", dev.paddock.http.Json.string(body));
  }

  private Map<String, Object> ok(Object... fieldsAndValues) throws Exception {
    HttpResponse<String> response = edit(fieldsAndValues);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return AgentFixture.json(response);
  }

  private Path file(String name, String content) throws Exception {
    Path file = agent.workspace().resolve(name);
    Files.createDirectories(file.getParent());
    Files.writeString(file, content);
    return file;
  }

  private static String detail(HttpResponse<String> response) {
    return (String) AgentFixture.json(response).get("detail");
  }

  @Test
  void viewNumbersLinesAsCatN() throws Exception {
    Path file = file("a.txt", "alpha\n\tbeta\ngamma\n");

    Map<String, Object> reply = ok("command", "view", "path", file.toString());

    assertThat(reply.get("output"))
        .isEqualTo(
            "Here's the result of running `cat -n` on "
                + file
                + ":\n     1\talpha\n     2\t\tbeta\n     3\tgamma\n");
    assertThat(reply).containsEntry("kind", "file").containsEntry("total_lines", 3);
    assertThat(reply).containsEntry("truncated", false);
  }

  @Test
  void viewRangeFollowsOpenHandsRules() throws Exception {
    Path file = file("r.txt", "1\n2\n3\n4\n5");

    Map<String, Object> toEnd =
        ok("command", "view", "path", file.toString(), "view_range", List.of(4, -1));
    assertThat((String) toEnd.get("output")).endsWith(":\n     4\t4\n     5\t5\n");
    Map<String, Object> pastEnd =
        ok("command", "view", "path", file.toString(), "view_range", List.of(2, 9));
    assertThat((String) pastEnd.get("output"))
        .startsWith("NOTE: We only show up to 5 since there're only 5 lines in this file.\n")
        .endsWith("     2\t2\n     3\t3\n     4\t4\n     5\t5\n");
    assertThat(pastEnd).containsEntry("start_line", 2).containsEntry("end_line", 5);

    HttpResponse<String> before =
        edit("command", "view", "path", file.toString(), "view_range", List.of(6, 7));
    assertThat(before.statusCode()).isEqualTo(422);
    assertThat(detail(before))
        .isEqualTo(
            "Invalid `view_range` parameter: [6, 7]. Its first element `6` should be within the"
                + " range of lines of the file: [1, 5].");
    HttpResponse<String> backwards =
        edit("command", "view", "path", file.toString(), "view_range", List.of(3, 2));
    assertThat(backwards.statusCode()).isEqualTo(422);
    assertThat(detail(backwards)).contains("should be greater than or equal to the first element");
  }

  @Test
  void rangeOfALargeFileIsReadFromItsIndexAndFollowsChanges() throws Exception {
    Path file = agent.workspace().resolve("big.log");
    try (BufferedWriter out = Files.newBufferedWriter(file)) {
      for (int i = 1; i <= 100_000; i++) {
        out.write("line " + i + " of the big file, padded to look like a log line\n");
      }
    }
    assertThat(Files.size(file)).isGreaterThan(5_000_000);

    for (int round = 0; round < 2; round++) {
      Map<String, Object> reply =
          ok(
              "command",
              "view",
              "path",
              file.toString(),
              "view_range",
              List.of(60_001, 60_300),
              "max_output_chars",
              100_000);
      String output = (String) reply.get("output");
      assertThat(output.lines().skip(1).toList())
          .hasSize(300)
          .startsWith(" 60001\tline 60001 of the big file, padded to look like a log line")
          .endsWith(" 60300\tline 60300 of the big file, padded to look like a log line");
      assertThat(reply).containsEntry("total_lines", 100_000).containsEntry("truncated", false);
    }

    Files.writeString(file, "one more line\n", StandardOpenOption.APPEND);
    Map<String, Object> grown =
        ok("command", "view", "path", file.toString(), "view_range", List.of(100_001, -1));
    assertThat((String) grown.get("output")).endsWith("100001\tone more line\n");
    assertThat(grown).containsEntry("total_lines", 100_001);
  }

  @Test
  void viewOutputIsCappedWithOpenHandsNote() throws Exception {
    Path file = file("long.txt", ("x".repeat(99) + "\n").repeat(1000));

    Map<String, Object> reply = ok("command", "view", "path", file.toString());

    String output = (String) reply.get("output");
    assertThat(output).endsWith(NumberedLines.TRUNCATED_NOTE + "\n");
    assertThat(output.length()).isLessThan(16_000 + 3_000);
    assertThat(reply).containsEntry("truncated", true).containsEntry("total_lines", 1000);
    Map<String, Object> wider =
        ok("command", "view", "path", file.toString(), "max_output_chars", 200_000);
    assertThat(wider).containsEntry("truncated", false).containsEntry("end_line", 1000);
  }

  @Test
  void viewOfADirectoryListsTwoLevelsWithoutHiddenEntries() throws Exception {
    Path root = agent.workspace().resolve("proj");
    file("proj/src/Main.java", "class Main {}");
    file("proj/src/deep/Deeper.java", "");
    file("proj/README.md", "");
    file("proj/.env", "SECRET=1");
    file("proj/src/.cache", "");

    Map<String, Object> reply = ok("command", "view", "path", root.toString());

    assertThat(reply.get("output"))
        .isEqualTo(
            "Here's the files and directories up to 2 levels deep in "
                + root
                + ", excluding hidden items:\n"
                + root
                + "/\n"
                + root
                + "/README.md\n"
                + root
                + "/src/\n"
                + root
                + "/src/Main.java\n"
                + root
                + "/src/deep/\n\n"
                + "1 hidden files/directories in this directory are excluded. You can use 'ls -la "
                + root
                + "' to see them.");
    assertThat(reply).containsEntry("kind", "directory").containsEntry("entries", 4);
  }

  @Test
  void strReplaceReplacesTheOneOccurrenceAndShowsTheEditedSnippet() throws Exception {
    StringBuilder text = new StringBuilder();
    for (int i = 1; i <= 20; i++) {
      text.append("line ").append(i).append('\n');
    }
    Path file = file("s.txt", text.toString());

    Map<String, Object> reply =
        ok(
            "command", "str_replace",
            "path", file.toString(),
            "old_str", "line 10\n",
            "new_str", "line ten\nline ten and a half\n");

    assertThat(Files.readString(file))
        .contains("line 9\nline ten\nline ten and a half\nline 11\n")
        .doesNotContain("line 10\n");
    assertThat(reply.get("output"))
        .isEqualTo(
            "The file "
                + file
                + " has been edited. Here's the result of running `cat -n` on a snippet of "
                + file
                + ":\n"
                + "     6\tline 6\n     7\tline 7\n     8\tline 8\n     9\tline 9\n"
                + "    10\tline ten\n    11\tline ten and a half\n    12\tline 11\n"
                + "    13\tline 12\n    14\tline 13\n    15\tline 14\n    16\tline 15\n"
                + "Review the changes and make sure they are as expected. Edit the file again if"
                + " necessary.");
    assertThat(reply)
        .containsEntry("line", 10)
        .containsEntry("snippet_start_line", 6)
        .containsEntry("snippet_end_line", 16)
        .doesNotContainKey("total_lines")
        .containsEntry("undo_depth", 1);
  }

  @Test
  void strReplaceRefusesTextThatOccursMoreThanOnceAndSaysWhere() throws Exception {
    Path file = file("dup.py", "x = 1\nprint(x)\ny = 2\nprint(x)\nprint(x); print(x)\n");

    HttpResponse<String> response =
        edit(
            "command",
            "str_replace",
            "path",
            file.toString(),
            "old_str",
            "print(x)",
            "new_str",
            "print(y)");

    assertThat(response.statusCode()).isEqualTo(409);
    assertThat(AgentFixture.json(response))
        .containsEntry(
            "detail",
            "No replacement was performed. Multiple occurrences of old_str `print(x)` in lines"
                + " [2, 4, 5] (4 occurrences). Please ensure it is unique.")
        .containsEntry("occurrences", 4)
        .containsEntry("lines", List.of(2, 4, 5, 5));
    assertThat(Files.readString(file)).contains("print(x)\ny = 2");
  }

  @Test
  void strReplaceRefusesTextThatIsNotThere() throws Exception {
    Path file = file("none.txt", "hello world\n");

    HttpResponse<String> response =
        edit(
            "command",
            "str_replace",
            "path",
            file.toString(),
            "old_str",
            "hello  world",
            "new_str",
            "bye");

    assertThat(response.statusCode()).isEqualTo(409);
    assertThat(AgentFixture.json(response))
        .containsEntry(
            "detail",
            "No replacement was performed, old_str `hello  world` did not appear verbatim in "
                + file
                + ".")
        .containsEntry("occurrences", 0);
  }

  @Test
  void strReplaceWithAnEmptyNewStrDeletesTheText() throws Exception {
    Path file = file("del.txt", "keep\ndrop me\nkeep too");

    ok("command", "str_replace", "path", file.toString(), "old_str", "drop me\n", "new_str", "");

    assertThat(Files.readString(file)).isEqualTo("keep\nkeep too");
  }

  @Test
  void insertGoesAfterTheGivenLineAtTopMiddleAndEnd() throws Exception {
    Path file = file("i.txt", "one\ntwo\nthree\n");

    ok("command", "insert", "path", file.toString(), "insert_line", 0, "new_str", "zero");
    ok(
        "command",
        "insert",
        "path",
        file.toString(),
        "insert_line",
        2,
        "new_str",
        "one and a half\n");
    Map<String, Object> end =
        ok("command", "insert", "path", file.toString(), "insert_line", 5, "new_str", "four\nfive");

    assertThat(Files.readString(file))
        .isEqualTo("zero\none\none and a half\ntwo\nthree\nfour\nfive\n");
    assertThat((String) end.get("output"))
        .startsWith(
            "The file "
                + file
                + " has been edited. Here's the result of running `cat -n` on a snippet of the"
                + " edited file:\n     2\tone\n")
        .contains("     6\tfour\n     7\tfive\n")
        .endsWith("Edit the file again if necessary.");
    assertThat(end).containsEntry("lines_inserted", 2).containsEntry("total_lines", 7);

    HttpResponse<String> outside =
        edit("command", "insert", "path", file.toString(), "insert_line", 8, "new_str", "x");
    assertThat(outside.statusCode()).isEqualTo(422);
    assertThat(detail(outside))
        .isEqualTo(
            "Invalid `insert_line` parameter: 8. It should be within the range of allowed values:"
                + " [0, 7]");
  }

  @Test
  void insertAtTheEndOfAFileWithoutFinalNewlineKeepsItWithout() throws Exception {
    Path file = file("n.txt", "a\nb");

    ok("command", "insert", "path", file.toString(), "insert_line", 2, "new_str", "c");

    assertThat(Files.readString(file)).isEqualTo("a\nb\nc");
  }

  @Test
  void undoWalksBackThroughEachEditThenHasNoHistory() throws Exception {
    Path file = file("u.txt", "v1\n");
    ok("command", "str_replace", "path", file.toString(), "old_str", "v1", "new_str", "v2");
    ok("command", "str_replace", "path", file.toString(), "old_str", "v2", "new_str", "v3");
    ok("command", "insert", "path", file.toString(), "insert_line", 1, "new_str", "more");
    assertThat(Files.readString(file)).isEqualTo("v3\nmore\n");

    Map<String, Object> first = ok("command", "undo_edit", "path", file.toString());
    assertThat(Files.readString(file)).isEqualTo("v3\n");
    assertThat(first.get("output"))
        .isEqualTo(
            "Last edit to "
                + file
                + " undone successfully. Here's the result of running `cat -n` on "
                + file
                + ":\n     1\tv3\n");
    assertThat(first).containsEntry("undo_depth", 2);
    ok("command", "undo_edit", "path", file.toString());
    assertThat(Files.readString(file)).isEqualTo("v2\n");
    ok("command", "undo_edit", "path", file.toString());
    assertThat(Files.readString(file)).isEqualTo("v1\n");

    HttpResponse<String> none = edit("command", "undo_edit", "path", file.toString());
    assertThat(none.statusCode()).isEqualTo(409);
    assertThat(detail(none)).isEqualTo("No edit history found for " + file + ".");
  }

  @Test
  void historyKeepsTheLastTenVersionsOfAFile() throws Exception {
    Path file = file("ten.txt", "0");
    for (int i = 1; i <= 12; i++) {
      ok("command", "create", "path", file.toString(), "file_text", "" + i, "overwrite", true);
    }
    for (int i = 11; i >= 2; i--) {
      ok("command", "undo_edit", "path", file.toString());
      assertThat(Files.readString(file)).isEqualTo("" + i);
    }
    assertThat(edit("command", "undo_edit", "path", file.toString()).statusCode()).isEqualTo(409);
  }

  @Test
  void undoIsRefusedOnceTheFileChangedOutsideTheEditor() throws Exception {
    Path file = file("ext.txt", "mine\n");
    ok("command", "str_replace", "path", file.toString(), "old_str", "mine", "new_str", "edited");
    Files.writeString(file, "someone else's\n");

    HttpResponse<String> response = edit("command", "undo_edit", "path", file.toString());

    assertThat(response.statusCode()).isEqualTo(409);
    assertThat(detail(response)).contains("changed outside the editor");
    assertThat(Files.readString(file)).isEqualTo("someone else's\n");
  }

  @Test
  void createWritesANewFileWithParentsAndUndoRemovesIt() throws Exception {
    Path file = agent.workspace().resolve("new/dir/hello.py");

    Map<String, Object> created =
        ok("command", "create", "path", file.toString(), "file_text", "print('hi')\n");

    assertThat(created)
        .containsEntry("output", "File created successfully at: " + file)
        .containsEntry("prev_exist", false);
    assertThat(Files.readString(file)).isEqualTo("print('hi')\n");
    Map<String, Object> undone = ok("command", "undo_edit", "path", file.toString());
    assertThat(undone).containsEntry("removed", true);
    assertThat(file).doesNotExist();
  }

  @Test
  void createRefusesAnExistingFileUnlessOverwriteIsAsked() throws Exception {
    Path file = file("exists.txt", "old\n");

    HttpResponse<String> refused =
        edit("command", "create", "path", file.toString(), "file_text", "new\n");
    assertThat(refused.statusCode()).isEqualTo(409);
    assertThat(detail(refused))
        .startsWith(
            "Invalid `path` parameter: "
                + file
                + ". File already exists at: "
                + file
                + ". Cannot overwrite files using command `create`");
    assertThat(Files.readString(file)).isEqualTo("old\n");

    ok("command", "create", "path", file.toString(), "file_text", "new\n", "overwrite", true);
    assertThat(Files.readString(file)).isEqualTo("new\n");
    ok("command", "undo_edit", "path", file.toString());
    assertThat(Files.readString(file)).isEqualTo("old\n");
  }

  @Test
  void crlfFilesStayCrlfWhenTheAgentSendsLf() throws Exception {
    Path file = file("win.txt", "first\r\nsecond\r\nthird\r\n");

    Map<String, Object> viewed = ok("command", "view", "path", file.toString());
    assertThat((String) viewed.get("output")).contains("     2\tsecond\n").doesNotContain("\r");
    ok(
        "command",
        "str_replace",
        "path",
        file.toString(),
        "old_str",
        "first\nsecond",
        "new_str",
        "1st\n2nd");
    ok("command", "insert", "path", file.toString(), "insert_line", 1, "new_str", "1.5\nmore");

    assertThat(Files.readString(file)).isEqualTo("1st\r\n1.5\r\nmore\r\n2nd\r\nthird\r\n");
  }

  @Test
  void editsKeepTheFileModeAndLeaveNoStagingFiles() throws Exception {
    Path file = file("run.sh", "echo old\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-x---"));

    ok("command", "str_replace", "path", file.toString(), "old_str", "old", "new_str", "new");

    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rwxr-x---");
    try (var listing = Files.list(agent.workspace())) {
      assertThat(listing).containsExactly(file);
    }
  }

  @Test
  void editingThroughASymlinkChangesItsTargetAndKeepsTheLink() throws Exception {
    Path target = file("real.txt", "through a link\n");
    Path link = Files.createSymbolicLink(agent.workspace().resolve("link.txt"), target);

    ok("command", "str_replace", "path", link.toString(), "old_str", "a link", "new_str", "it");

    assertThat(Files.isSymbolicLink(link)).isTrue();
    assertThat(Files.readString(target)).isEqualTo("through it\n");
  }

  @Test
  void binaryFilesAreRefusedAndOtherEncodingsNeedNaming() throws Exception {
    Path binary = agent.workspace().resolve("image.bin");
    Files.write(binary, new byte[] {'P', 'N', 'G', 0, 1, 2, '\n'});
    HttpResponse<String> refused = edit("command", "view", "path", binary.toString());
    assertThat(refused.statusCode()).isEqualTo(415);
    assertThat(detail(refused)).contains("appears to be binary (a NUL byte at offset 3)");

    Path latin = agent.workspace().resolve("latin.txt");
    Files.write(latin, "caf\u00e9 cr\u00e8me\n".getBytes(StandardCharsets.ISO_8859_1));
    HttpResponse<String> notUtf8 =
        edit("command", "str_replace", "path", latin.toString(), "old_str", "cr", "new_str", "x");
    assertThat(notUtf8.statusCode()).isEqualTo(415);
    assertThat(detail(notUtf8)).contains("not valid UTF-8").contains("`encoding`");

    ok(
        "command",
        "str_replace",
        "path",
        latin.toString(),
        "old_str",
        "cr\u00e8me",
        "new_str",
        "br\u00fbl\u00e9e",
        "encoding",
        "latin-1");
    assertThat(Files.readAllBytes(latin))
        .isEqualTo("caf\u00e9 br\u00fbl\u00e9e\n".getBytes(StandardCharsets.ISO_8859_1));
    HttpResponse<String> multiByte =
        edit("command", "view", "path", latin.toString(), "encoding", "UTF-16");
    assertThat(multiByte.statusCode()).isEqualTo(422);
  }

  @Test
  void mistakesAreClientErrorsThatSayWhatToDo() throws Exception {
    Path file = file("m.txt", "text\n");
    Path missing = agent.workspace().resolve("missing.txt");

    HttpResponse<String> notThere = edit("command", "view", "path", missing.toString());
    assertThat(notThere.statusCode()).isEqualTo(404);
    assertThat(detail(notThere))
        .isEqualTo(
            "Invalid `path` parameter: "
                + missing
                + ". The path "
                + missing
                + " does not exist. Please provide a valid path.");
    HttpResponse<String> noOld =
        edit("command", "str_replace", "path", file.toString(), "new_str", "x");
    assertThat(noOld.statusCode()).isEqualTo(422);
    assertThat(detail(noOld))
        .startsWith("Parameter `old_str` is required for command: str_replace.\n\nHint: ");
    HttpResponse<String> same =
        edit("command", "str_replace", "path", file.toString(), "old_str", "t", "new_str", "t");
    assertThat(detail(same)).contains("`new_str` and `old_str` must be different");
    HttpResponse<String> directory =
        edit(
            "command",
            "insert",
            "path",
            agent.workspace().toString(),
            "insert_line",
            0,
            "new_str",
            "x");
    assertThat(directory.statusCode()).isEqualTo(400);
    assertThat(detail(directory)).contains("only the `view` command can be used on directories");
    HttpResponse<String> relative = edit("command", "view", "path", "m.txt");
    assertThat(relative.statusCode()).isEqualTo(400);
    assertThat(detail(relative)).contains("should be an absolute path");
    HttpResponse<String> unknown = edit("command", "delete", "path", file.toString());
    assertThat(unknown.statusCode()).isEqualTo(422);
    assertThat(detail(unknown))
        .isEqualTo(
            "Unrecognized command delete. The allowed commands for the file editor are: view,"
                + " create, str_replace, insert, undo_edit");
    HttpResponse<String> typo =
        edit("command", "view", "path", file.toString(), "view_rnage", List.of(1, 2));
    assertThat(typo.statusCode()).isEqualTo(422);
    assertThat(detail(typo)).contains("view_rnage");
    assertThat(
            edit("command", "view", "path", file.toString(), "security_risk", "LOW").statusCode())
        .isEqualTo(200);
  }
}
