package dev.paddock.agent.bash;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Splits one channel of the shell's output into the current command's output and the marker that
 * ends it. Bytes that might be the start of a marker are held back until it is clear. Guarded by
 * {@code this}; waiters block on it.
 */
final class MarkerScanner {
  private final Channel channel;
  private final Supplier<CommandRecord> current;
  private final Runnable markerSeen;
  private byte[] marker = new byte[0];
  private final byte[] held = new byte[256];
  private int heldLength;
  private boolean seen = true;
  private int status = -1;
  private boolean eof;

  /**
   * @param current the command the bytes belong to right now, or null between commands
   * @param markerSeen told, outside this scanner's lock, each time a marker has come in
   */
  MarkerScanner(Channel channel, Supplier<CommandRecord> current, Runnable markerSeen) {
    this.channel = channel;
    this.current = current;
    this.markerSeen = markerSeen;
  }

  synchronized void expect(String nonce) {
    marker = ("\036PADDOCK:" + nonce + ":").getBytes(StandardCharsets.US_ASCII);
    seen = false;
    status = -1;
  }

  synchronized int status() {
    return status;
  }

  synchronized boolean seen() {
    return seen;
  }

  synchronized boolean await(long deadlineNanos) throws InterruptedException {
    while (!seen && !eof) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return seen;
  }

  /**
   * Called by the one pump thread of this channel. Output before a marker is handed to the command
   * <em>before</em> the marker is announced, so the watcher never finishes the command while its
   * last bytes are still on their way.
   */
  void accept(byte[] data, int offset, int length) {
    CommandRecord target = current.get();
    List<byte[]> deliver = new ArrayList<>(2);
    boolean markerFound = false;
    int markerStatus = -1;
    synchronized (this) {
      byte[] buffer = new byte[heldLength + length];
      System.arraycopy(held, 0, buffer, 0, heldLength);
      System.arraycopy(data, offset, buffer, heldLength, length);
      heldLength = 0;
      if (!seen) {
        int at = indexOf(buffer, 0, marker);
        int newline = at < 0 ? -1 : indexOfByte(buffer, at + marker.length, (byte) '\n');
        if (at >= 0 && newline >= 0) {
          deliver.add(java.util.Arrays.copyOfRange(buffer, 0, at));
          markerStatus =
              parse(
                  new String(
                      buffer,
                      at + marker.length,
                      newline - at - marker.length,
                      StandardCharsets.US_ASCII));
          markerFound = true;
          // Whatever follows the marker comes from background jobs between commands: dropped.
        } else if (at >= 0) {
          deliver.add(java.util.Arrays.copyOfRange(buffer, 0, at));
          hold(buffer, at, buffer.length);
        } else {
          int keep = partialMarkerSuffix(buffer, 0);
          deliver.add(java.util.Arrays.copyOfRange(buffer, 0, buffer.length - keep));
          hold(buffer, buffer.length - keep, buffer.length);
        }
      }
    }
    if (target != null) {
      for (byte[] chunk : deliver) {
        if (chunk.length > 0) {
          target.append(channel, chunk, 0, chunk.length);
        }
      }
    }
    if (markerFound) {
      synchronized (this) {
        status = markerStatus;
        seen = true;
        notifyAll();
      }
      markerSeen.run();
    }
  }

  synchronized void markEof() {
    eof = true;
    notifyAll();
  }

  private void hold(byte[] buffer, int from, int to) {
    int n = Math.min(to - from, held.length);
    System.arraycopy(buffer, from, held, 0, n);
    heldLength = n;
  }

  private int partialMarkerSuffix(byte[] buffer, int from) {
    int max = Math.min(marker.length - 1, buffer.length - from);
    for (int len = max; len > 0; len--) {
      if (java.util.Arrays.equals(buffer, buffer.length - len, buffer.length, marker, 0, len)) {
        return len;
      }
    }
    return 0;
  }

  private static int parse(String digits) {
    if (digits.isEmpty()) {
      return 0;
    }
    try {
      return Integer.parseInt(digits.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static int indexOf(byte[] buffer, int from, byte[] pattern) {
    outer:
    for (int i = from; i <= buffer.length - pattern.length; i++) {
      for (int j = 0; j < pattern.length; j++) {
        if (buffer[i + j] != pattern[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  private static int indexOfByte(byte[] buffer, int from, byte b) {
    for (int i = from; i < buffer.length; i++) {
      if (buffer[i] == b) {
        return i;
      }
    }
    return -1;
  }
}
