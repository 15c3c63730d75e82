package dev.paddock.agent.files;

import dev.paddock.http.HttpError;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

/** Permission bits: octal text on the wire ({@code "0755"}), {@code 0} to {@code 0777} inside. */
final class Modes {
  static final int MAX = 0777;

  private Modes() {}

  static int check(int mode) {
    if (mode < 0 || mode > MAX) {
      throw HttpError.unprocessable(
          "mode must be between 0000 and 0777, got " + Integer.toOctalString(mode));
    }
    return mode;
  }

  /**
   * Parses octal text such as {@code 755} or {@code 0644}. Set-id and sticky bits are refused: Java
   * can set only the nine permission bits.
   */
  static int parse(String field, String text) {
    if (!text.matches("0?[0-7]{1,3}")) {
      throw HttpError.unprocessable(
          "'"
              + field
              + "' must be octal permission bits 000 to 777 (such as \"0644\"), got '"
              + (text.length() > 20 ? text.substring(0, 20) + "..." : text)
              + "'");
    }
    return Integer.parseInt(text, 8);
  }

  static String format(int mode) {
    return String.format("%04o", mode);
  }

  static Set<PosixFilePermission> permissions(int mode) {
    Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
    for (PosixFilePermission permission : PosixFilePermission.values()) {
      // OWNER_READ (ordinal 0) is 0400 ... OTHERS_EXECUTE (ordinal 8) is 01.
      if ((mode & (1 << (8 - permission.ordinal()))) != 0) {
        set.add(permission);
      }
    }
    return set;
  }
}
