package dev.paddock.hardening.badinput;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Writes ustar archives with whatever names, link targets and types the suite asks for (a real tar
 * tool refuses the hostile ones), and can cut them short.
 */
final class Tar {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  /** A regular file. */
  Tar file(String name, byte[] content) {
    return entry(name, '0', "", content);
  }

  /** A symbolic link. */
  Tar symlink(String name, String target) {
    return entry(name, '2', target, new byte[0]);
  }

  /** A hard link. */
  Tar hardLink(String name, String target) {
    return entry(name, '1', target, new byte[0]);
  }

  /** Any type flag (directories, FIFOs, devices, nonsense). */
  Tar entry(String name, char type, String link, byte[] content) {
    byte[] header = new byte[512];
    put(header, 0, 100, name);
    put(header, 100, 8, "0000644");
    put(header, 108, 8, "0000000");
    put(header, 116, 8, "0000000");
    put(header, 124, 12, String.format("%011o", content.length));
    put(header, 136, 12, "00000000000");
    for (int i = 148; i < 156; i++) {
      header[i] = ' ';
    }
    header[156] = (byte) type;
    put(header, 157, 100, link);
    put(header, 257, 6, "ustar");
    put(header, 263, 2, "00");
    int sum = 0;
    for (byte b : header) {
      sum += b & 0xff;
    }
    put(header, 148, 8, String.format("%06o", sum) + "\0 ");
    out.writeBytes(header);
    out.writeBytes(content);
    out.writeBytes(new byte[(512 - content.length % 512) % 512]);
    return this;
  }

  /** The archive with its two closing zero blocks. */
  byte[] bytes() {
    ByteArrayOutputStream whole = new ByteArrayOutputStream();
    whole.writeBytes(out.toByteArray());
    whole.writeBytes(new byte[1024]);
    return whole.toByteArray();
  }

  private static void put(byte[] header, int offset, int length, String value) {
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    System.arraycopy(bytes, 0, header, offset, Math.min(length, bytes.length));
  }
}
