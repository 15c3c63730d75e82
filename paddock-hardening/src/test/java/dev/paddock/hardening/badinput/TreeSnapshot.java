package dev.paddock.hardening.badinput;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What a directory tree holds, entry by entry: type, permissions, size, modification time and a
 * digest of each file's bytes. Two snapshots are equal only if nothing was created, removed,
 * written, chmod-ed or touched in between; links are not followed.
 */
record TreeSnapshot(Map<String, String> entries) {

  static TreeSnapshot of(Path root) {
    Map<String, String> entries = new TreeMap<>();
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.toList()) {
        entries.put(root.relativize(p).toString(), describe(p));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new TreeSnapshot(entries);
  }

  private static String describe(Path p) throws IOException {
    PosixFileAttributes a =
        Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    String kind = a.isSymbolicLink() ? "link" : a.isDirectory() ? "dir" : "file";
    String content =
        a.isSymbolicLink()
            ? Files.readSymbolicLink(p).toString()
            : a.isRegularFile() ? digest(Files.readAllBytes(p)) : "";
    return kind
        + " "
        + PosixFilePermissions.toString(a.permissions())
        + " "
        + a.size()
        + " "
        + a.lastModifiedTime().toMillis()
        + " "
        + content;
  }

  private static String digest(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
