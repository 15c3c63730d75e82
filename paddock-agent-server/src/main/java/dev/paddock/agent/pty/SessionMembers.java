package dev.paddock.agent.pty;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The live processes of one session (a terminal's leader is its session's id, and every job the
 * shell starts stays in that session unless it calls setsid itself), read from {@code
 * /proc/<pid>/stat}. Descendants are not enough: jobs are re-parented once the shell has exited.
 */
final class SessionMembers {
  private SessionMembers() {}

  static List<Long> of(long session) {
    List<Long> members = new ArrayList<>();
    try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
      for (Path proc : procs) {
        if (inSession(proc, session)) {
          members.add(Long.parseLong(proc.getFileName().toString()));
        }
      }
    } catch (IOException e) {
      return members;
    }
    return members;
  }

  private static boolean inSession(Path proc, long session) {
    try {
      String stat = Files.readString(proc.resolve("stat"));
      // pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses.
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return Long.parseLong(fields[3]) == session && !fields[0].equals("Z");
    } catch (IOException | RuntimeException e) {
      return false; // It exited while we looked.
    }
  }
}
