package dev.paddock.agent.user;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The effective user and group ids of a process, from the {@code Uid:} and {@code Gid:} lines of
 * {@code /proc/<pid>/status} (real, effective, saved, filesystem).
 */
record ProcessIds(int uid, int gid) {
  /** This JVM's ids. */
  static ProcessIds ofThisProcess() {
    try {
      return parseStatus(Files.readString(Path.of("/proc/self/status")));
    } catch (IOException | IllegalArgumentException e) {
      throw new CommandUserException(
          "cannot read this process's user id from /proc/self/status: " + e.getMessage(), e);
    }
  }

  static ProcessIds parseStatus(String status) {
    return new ProcessIds(effective(status, "Uid:"), effective(status, "Gid:"));
  }

  private static int effective(String status, String label) {
    for (String line : status.split("\n")) {
      if (line.startsWith(label)) {
        String[] ids = line.substring(label.length()).trim().split("\\s+");
        if (ids.length >= 2) {
          return Integer.parseInt(ids[1]);
        }
      }
    }
    throw new IllegalArgumentException("no '" + label + "' line with an effective id");
  }

  boolean is(RunAs user) {
    return uid == user.uid() && gid == user.gid();
  }
}
