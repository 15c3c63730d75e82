package dev.paddock.agent.edit;

import dev.paddock.http.HttpError;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.Charset;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.StandardCharsets;
import java.nio.charset.UnsupportedCharsetException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The text encoding of a file: UTF-8 unless the request names another, which must be a single-byte
 * encoding (latin-1, windows-1252...). Both kinds keep every ASCII byte as itself, so lines end at
 * a {@code \n} byte and an encoded {@code old_str} can be searched for as bytes: for UTF-8 a byte
 * match is a character match, because no character's encoding contains another's. Immutable.
 */
record TextCodec(Charset charset) {
  /** How much of a file is checked for binary content, as most tools do. */
  static final int SNIFF_BYTES = 8192;

  static final TextCodec UTF_8 = new TextCodec(StandardCharsets.UTF_8);

  /** The codec for the request's {@code encoding}; 422 for unknown or multi-byte ones. */
  static TextCodec named(String name) {
    Charset charset;
    try {
      charset = Charset.forName(aliasOf(name));
    } catch (IllegalCharsetNameException | UnsupportedCharsetException e) {
      throw HttpError.unprocessable("unknown encoding '" + name + "'");
    }
    if (charset.equals(StandardCharsets.UTF_8)) {
      return UTF_8;
    }
    if (!charset.canEncode() || charset.newEncoder().maxBytesPerChar() != 1.0f) {
      throw HttpError.unprocessable(
          "encoding '"
              + name
              + "' is not supported: use UTF-8 (the default) or a single-byte encoding such as"
              + " latin-1 or windows-1252");
    }
    return new TextCodec(charset);
  }

  /** Python's spellings, which agents often send. */
  private static String aliasOf(String name) {
    return switch (name.toLowerCase(Locale.ROOT).replace('_', '-')) {
      case "latin-1", "latin1", "l1" -> "ISO-8859-1";
      case "utf8" -> "UTF-8";
      case "ascii" -> "US-ASCII";
      default -> name;
    };
  }

  /**
   * Refuses (415) a file whose first block holds a NUL byte or, for UTF-8, bytes that are not
   * UTF-8: it is binary, or text in an encoding the request did not name.
   */
  void requireText(Path path, byte[] head, int length) {
    for (int i = 0; i < length; i++) {
      if (head[i] == 0) {
        throw new HttpError(
            415,
            "File validation failed for "
                + path
                + ": it appears to be binary (a NUL byte at offset "
                + i
                + ") and cannot be viewed or edited as text.");
      }
    }
    if (charset.equals(StandardCharsets.UTF_8) && !isUtf8(head, length)) {
      throw new HttpError(
          415,
          "File validation failed for "
              + path
              + ": its first "
              + length
              + " bytes are not valid UTF-8; if it is text in another encoding, name it in"
              + " `encoding` (for example \"latin-1\").");
    }
  }

  /** Whether {@code bytes[0, length)} is UTF-8, allowing a character cut off at the end. */
  private static boolean isUtf8(byte[] bytes, int length) {
    CharsetDecoder decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    CharBuffer out = CharBuffer.allocate(length + 1);
    CoderResult result = decoder.decode(ByteBuffer.wrap(bytes, 0, length), out, false);
    return !result.isError();
  }

  byte[] encode(String text) {
    return text.getBytes(charset);
  }

  String decode(byte[] bytes, int from, int length) {
    return new String(bytes, from, length, charset);
  }
}
