package dev.paddock.http;

import dev.paddock.http.TlsFileException.Part;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/** A certificate chain and key read from PEM files once (see {@link TlsCertificate}). */
final class PemCertificate implements TlsCertificate {
  private static final Pattern BLOCK =
      Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \\1-----", Pattern.DOTALL);
  private static final String CONVERT = "convert it with: openssl pkcs8 -topk8 -nocrypt -in ";
  private static final char[] IN_MEMORY = "paddock".toCharArray(); // never written anywhere
  // rsaEncryption's AlgorithmIdentifier: SEQUENCE { OID 1.2.840.113549.1.1.1, NULL }
  private static final byte[] RSA_ALGORITHM = {
    0x30,
    0x0d,
    0x06,
    0x09,
    0x2a,
    (byte) 0x86,
    0x48,
    (byte) 0x86,
    (byte) 0xf7,
    0x0d,
    0x01,
    0x01,
    0x01,
    0x05,
    0x00
  };

  private final SSLContext context;
  private final X509Certificate leaf;

  private PemCertificate(SSLContext context, X509Certificate leaf) {
    this.context = context;
    this.leaf = leaf;
  }

  static PemCertificate load(Path certificateFile, Path keyFile) {
    return load(
        certificateFile, read(Part.CERTIFICATE, certificateFile), keyFile, read(Part.KEY, keyFile));
  }

  static PemCertificate load(Path certificateFile, byte[] certificate, Path keyFile, byte[] key) {
    List<X509Certificate> chain = chain(certificateFile, certificate);
    PrivateKey privateKey = privateKey(keyFile, key);
    requireMatch(chain.get(0), certificateFile, privateKey, keyFile);
    return new PemCertificate(context(chain, privateKey), chain.get(0));
  }

  static byte[] read(Part part, Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new TlsFileException(part, file, "no such file: " + file, e);
    } catch (IOException | SecurityException e) {
      throw new TlsFileException(part, file, "cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  private static List<X509Certificate> chain(Path file, byte[] text) {
    List<X509Certificate> chain = new ArrayList<>();
    try {
      CertificateFactory factory = CertificateFactory.getInstance("X.509");
      for (byte[] der : blocks(text, "CERTIFICATE")) {
        chain.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(der)));
      }
    } catch (CertificateException | IllegalArgumentException e) {
      throw new TlsFileException(
          Part.CERTIFICATE, file, file + " holds a broken certificate: " + e.getMessage(), e);
    }
    if (chain.isEmpty()) {
      throw new TlsFileException(
          Part.CERTIFICATE,
          file,
          file + " is not a PEM certificate (no -----BEGIN CERTIFICATE----- block)");
    }
    return chain;
  }

  private static PrivateKey privateKey(Path file, byte[] text) {
    Matcher block = BLOCK.matcher(new String(text, StandardCharsets.US_ASCII));
    while (block.find()) {
      String label = block.group(1);
      switch (label) {
        case "PRIVATE KEY" -> {
          return pkcs8(file, decode(file, block.group(2)));
        }
        case "RSA PRIVATE KEY" -> {
          if (block.group(2).contains("ENCRYPTED")) {
            throw new TlsFileException(Part.KEY, file, file + " is encrypted; " + CONVERT + file);
          }
          return pkcs8(file, pkcs1ToPkcs8(decode(file, block.group(2))));
        }
        case "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY" ->
            throw new TlsFileException(
                Part.KEY, file, file + " holds an " + label + " block; " + CONVERT + file);
        default -> {
          // e.g. EC PARAMETERS before the key: look further
        }
      }
    }
    throw new TlsFileException(
        Part.KEY, file, file + " is not a PEM private key (no -----BEGIN PRIVATE KEY----- block)");
  }

  private static PrivateKey pkcs8(Path file, byte[] der) {
    for (String algorithm : List.of("RSA", "EC", "EdDSA")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        // not a key of this algorithm: try the next
      }
    }
    throw new TlsFileException(
        Part.KEY, file, file + " holds a private key that is not RSA, EC or EdDSA, or is broken");
  }

  private static List<byte[]> blocks(byte[] text, String label) {
    List<byte[]> found = new ArrayList<>();
    Matcher block = BLOCK.matcher(new String(text, StandardCharsets.US_ASCII));
    while (block.find()) {
      if (block.group(1).equals(label)) {
        found.add(Base64.getMimeDecoder().decode(block.group(2)));
      }
    }
    return found;
  }

  private static byte[] decode(Path file, String base64) {
    try {
      return Base64.getMimeDecoder().decode(base64);
    } catch (IllegalArgumentException e) {
      throw new TlsFileException(Part.KEY, file, file + " holds broken base64: " + e.getMessage());
    }
  }

  /** PKCS#1 RSAPrivateKey wrapped as PrivateKeyInfo (RFC 5208): what KeyFactory reads. */
  private static byte[] pkcs1ToPkcs8(byte[] pkcs1) {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.writeBytes(new byte[] {0x02, 0x01, 0x00}); // version 0
    body.writeBytes(RSA_ALGORITHM);
    body.writeBytes(derHeader(0x04, pkcs1.length)); // OCTET STRING
    body.writeBytes(pkcs1);
    ByteArrayOutputStream info = new ByteArrayOutputStream();
    info.writeBytes(derHeader(0x30, body.size())); // SEQUENCE
    info.writeBytes(body.toByteArray());
    return info.toByteArray();
  }

  private static byte[] derHeader(int tag, int length) {
    if (length < 0x80) {
      return new byte[] {(byte) tag, (byte) length};
    }
    int bytes = length < 0x100 ? 1 : length < 0x10000 ? 2 : 3;
    byte[] header = new byte[2 + bytes];
    header[0] = (byte) tag;
    header[1] = (byte) (0x80 | bytes);
    for (int i = 0; i < bytes; i++) {
      header[2 + i] = (byte) (length >>> (8 * (bytes - 1 - i)));
    }
    return header;
  }

  /** Signs a random challenge with the key and verifies it with the certificate's public key. */
  private static void requireMatch(
      X509Certificate leaf, Path certificateFile, PrivateKey key, Path keyFile) {
    String mismatch = keyFile + " does not match the certificate in " + certificateFile;
    if (!leaf.getPublicKey().getAlgorithm().equals(key.getAlgorithm())) {
      throw new TlsFileException(
          Part.KEY,
          keyFile,
          mismatch
              + " (a "
              + key.getAlgorithm()
              + " key for a "
              + leaf.getPublicKey().getAlgorithm()
              + " certificate)");
    }
    try {
      byte[] challenge = new byte[32];
      new SecureRandom().nextBytes(challenge);
      String algorithm = signatureAlgorithm(key);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(challenge);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(leaf.getPublicKey());
      verifier.update(challenge);
      if (!verifier.verify(signature)) {
        throw new TlsFileException(Part.KEY, keyFile, mismatch);
      }
    } catch (GeneralSecurityException e) {
      throw new TlsFileException(Part.KEY, keyFile, mismatch + ": " + e.getMessage(), e);
    }
  }

  private static String signatureAlgorithm(PrivateKey key) {
    return switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      default -> key.getAlgorithm(); // EdDSA, Ed25519, Ed448 name their own signature
    };
  }

  private static SSLContext context(List<X509Certificate> chain, PrivateKey key) {
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry("server", key, IN_MEMORY, chain.toArray(new Certificate[0]));
      KeyManagerFactory keys =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keys.init(store, IN_MEMORY);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(keys.getKeyManagers(), null, null);
      return context;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("the JDK cannot build a TLS context: " + e.getMessage(), e);
    }
  }

  @Override
  public SSLContext get() {
    return context;
  }

  @Override
  public X509Certificate leaf() {
    return leaf;
  }

  @Override
  public void close() {
    // read once: nothing to stop
  }
}
