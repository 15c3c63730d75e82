package dev.paddock.backend.process;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * Cuts a byte stream into UTF-8 lines of at most {@code maxLine} bytes (longer lines are cut), so a
 * process printing without newlines never grows memory. Not thread-safe.
 */
final class LineSplitter {
  private final int maxLine;
  private final Consumer<String> sink;
  private final ByteArrayOutputStream current = new ByteArrayOutputStream();

  LineSplitter(int maxLine, Consumer<String> sink) {
    this.maxLine = maxLine;
    this.sink = sink;
  }

  void accept(byte[] bytes, int length) {
    for (int i = 0; i < length; i++) {
      byte b = bytes[i];
      if (b == '\n') {
        emit();
      } else if (b != '\r') {
        current.write(b);
        if (current.size() >= maxLine) {
          emit();
        }
      }
    }
  }

  /** Emits a last line that had no newline. */
  void finish() {
    if (current.size() > 0) {
      emit();
    }
  }

  private void emit() {
    sink.accept(current.toString(StandardCharsets.UTF_8));
    current.reset();
  }
}
