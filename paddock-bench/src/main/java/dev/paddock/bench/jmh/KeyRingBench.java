package dev.paddock.bench.jmh;

import dev.paddock.agent.core.KeyRing;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The session-key check every {@code /api} request pays: {@link KeyRing#accepts} hashes the
 * presented key and compares it with every held digest. Baseline: one SHA-256 of the same key, the
 * floor of any hashed check.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class KeyRingBench {
  /** Keys held: one normally, a few during a rotation. */
  @Param({"1", "4"})
  public int keys;

  private KeyRing ring;
  private String valid;
  private String wrong;
  private byte[] validBytes;

  @Setup
  public void setUp() {
    List<String> plaintext = new ArrayList<>();
    for (int i = 0; i < keys; i++) {
      plaintext.add("bench-session-key-" + i + "-0123456789abcdef0123456789abcdef");
    }
    ring = KeyRing.ofKeys(plaintext);
    valid = plaintext.get(plaintext.size() - 1);
    wrong = "bench-session-key-x-0123456789abcdef0123456789abcdef";
    validBytes = valid.getBytes(StandardCharsets.UTF_8);
  }

  @Benchmark
  public boolean acceptsValidKey() {
    return ring.accepts(valid);
  }

  @Benchmark
  public boolean rejectsWrongKey() {
    return ring.accepts(wrong);
  }

  @Benchmark
  public byte[] baselineSha256() throws NoSuchAlgorithmException {
    return MessageDigest.getInstance("SHA-256").digest(validBytes);
  }
}
