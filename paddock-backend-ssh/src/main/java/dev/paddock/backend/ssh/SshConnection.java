package dev.paddock.backend.ssh;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One host reached with the OpenSSH client: a master connection ({@code ControlMaster}) that every
 * command and port forward multiplexes over, so a call costs one channel, not a TCP connection, key
 * exchange and log-in.
 *
 * <p>The master is a child process of the control plane (never a detached {@code ControlPersist}
 * daemon), so it dies with it, and {@link #close} ends it and with it every forward. When it is
 * gone (the host rebooted, the network broke) the next call starts a new one; {@link #generation}
 * tells callers that the forwards they hold died with the old one. Host keys are checked strictly
 * against the configured {@code known_hosts} only and never learnt; no agent, no password, no user
 * config. Thread-safe: the master is guarded by {@code this}.
 */
final class SshConnection implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("paddock.backend.ssh");
  private static final String CONNECTED = "paddock-connected";

  private final SshTarget target;
  private final SshSettings settings;
  private final Path controlPath;

  /** Guarded by {@code this}. */
  private Process master;

  /** Guarded by {@code this}; bumped each time a new master connects. */
  private long generation;

  SshConnection(SshTarget target, SshSettings settings, Path controlPath) {
    this.target = target;
    this.settings = settings;
    this.controlPath = controlPath;
  }

  SshTarget target() {
    return target;
  }

  /**
   * Connects (or reuses the live master) and returns its generation.
   *
   * @throws SshHostException classified, when the host cannot be reached or refuses us
   */
  synchronized long connect() {
    if (master != null && master.isAlive()) {
      return generation;
    }
    Process started = startMaster();
    master = started;
    return ++generation;
  }

  /** The generation of the live master; forwards of older generations are gone. */
  synchronized long generation() {
    return master != null && master.isAlive() ? generation : -1;
  }

  private Process startMaster() {
    List<String> argv = base();
    argv.addAll(
        List.of(
            "-M",
            "-o",
            "ControlPersist=no",
            target.host(),
            "echo " + CONNECTED + "; exec cat >/dev/null"));
    // The client's stderr goes to a file, read once it has exited: read through a pipe, its reason
    // ("Connection refused", "Host key verification failed.") was now and then lost in CI, and the
    // failure misclassified. Unlinked once connected; the master keeps its descriptor.
    Path errorFile = errorFile();
    Process process = start(argv, errorFile);
    CompletableFuture<String> firstLine = firstLine(process.getInputStream());
    long deadline = settings.connectTimeout().plusSeconds(5).toMillis();
    try {
      String line = firstLine.get(deadline, TimeUnit.MILLISECONDS);
      if (line.equals(CONNECTED)) {
        LOG.log(System.Logger.Level.DEBUG, "ssh backend: connected to {0}", target);
        deleteQuietly(errorFile);
        return process;
      }
    } catch (TimeoutException | ExecutionException e) {
      // Classified from what the client said, below.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      throw new SshHostException(SshFailure.HOST_UNREACHABLE, target, "interrupted", e);
    }
    String said = reasonOnceEnded(process, errorFile);
    throw new SshHostException(
        ClientErrors.classify(said).orElse(SshFailure.HOST_UNREACHABLE),
        target,
        said.isBlank() ? "no answer within " + settings.connectTimeout() : said.strip(),
        null);
  }

  /**
   * Runs {@code remoteCommand} (a shell command line on the host) over the master.
   *
   * @param stdin what the command reads; empty: nothing
   * @throws SshHostException when the client cannot reach the host
   */
  SshResult run(String remoteCommand, byte[] stdin, Duration timeout) {
    connect();
    List<String> argv = base();
    argv.addAll(List.of("-o", "ControlMaster=no", target.host(), remoteCommand));
    Process process = start(argv);
    CompletableFuture<String> out = readAsync(process.getInputStream());
    CompletableFuture<String> err = readAsync(process.getErrorStream());
    try (OutputStream in = process.getOutputStream()) {
      in.write(stdin);
    } catch (IOException e) {
      // The command exited without reading its input: its exit code and stderr say why.
    }
    return await(process, out, err, timeout);
  }

  /**
   * Forwards {@code 127.0.0.1:localPort} here to {@code 127.0.0.1:remotePort} on the host, through
   * the master.
   *
   * @return false when the local port could not be bound (taken meanwhile)
   */
  boolean forward(int localPort, int remotePort) {
    return control("forward", localPort, remotePort).ok();
  }

  /** Cancels a forward made by {@link #forward}; nothing happens when it is gone already. */
  void cancel(int localPort, int remotePort) {
    if (generation() >= 0) {
      control("cancel", localPort, remotePort);
    }
  }

  private SshResult control(String command, int localPort, int remotePort) {
    List<String> argv = base();
    argv.addAll(
        List.of(
            "-O",
            command,
            "-L",
            "127.0.0.1:" + localPort + ":127.0.0.1:" + remotePort,
            target.host()));
    Process process = start(argv);
    CompletableFuture<String> out = readAsync(process.getInputStream());
    CompletableFuture<String> err = readAsync(process.getErrorStream());
    closeQuietly(process.getOutputStream());
    return await(process, out, err, settings.connectTimeout());
  }

  /** Ends the master (and so every forward); the host's sandboxes keep running. */
  @Override
  public synchronized void close() {
    if (master == null) {
      return;
    }
    closeQuietly(master.getOutputStream());
    master.destroy();
    try {
      if (!master.waitFor(5, TimeUnit.SECONDS)) {
        master.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      master.destroyForcibly();
    }
    master = null;
  }

  /** The options every invocation shares: strict, non-interactive, this key only. */
  private List<String> base() {
    long seconds = Math.max(1, settings.connectTimeout().toSeconds());
    return new ArrayList<>(
        List.of(
            settings.sshBinary(),
            "-F",
            "/dev/null",
            "-S",
            controlPath.toString(),
            "-i",
            settings.keyFile().toString(),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "IdentityAgent=none",
            "-o",
            "BatchMode=yes",
            "-o",
            "PasswordAuthentication=no",
            "-o",
            "KbdInteractiveAuthentication=no",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "UserKnownHostsFile=" + settings.knownHosts(),
            "-o",
            "GlobalKnownHostsFile=/dev/null",
            "-o",
            "UpdateHostKeys=no",
            "-o",
            "ConnectTimeout=" + seconds,
            "-o",
            "ServerAliveInterval=15",
            "-o",
            "ServerAliveCountMax=3",
            "-o",
            "ExitOnForwardFailure=yes",
            "-o",
            "LogLevel=ERROR",
            "-p",
            Integer.toString(target.port()),
            "-l",
            target.user()));
  }

  private Process start(List<String> argv) {
    return start(new ProcessBuilder(argv));
  }

  private Process start(List<String> argv, Path errorFile) {
    try {
      return start(new ProcessBuilder(argv).redirectError(errorFile.toFile()));
    } catch (SshHostException e) {
      deleteQuietly(errorFile);
      throw e;
    }
  }

  private Process start(ProcessBuilder builder) {
    try {
      return builder.start();
    } catch (IOException e) {
      throw new SshHostException(
          SshFailure.HOST_UNREACHABLE,
          target,
          "cannot run the OpenSSH client " + settings.sshBinary() + ": " + e.getMessage(),
          e);
    }
  }

  private SshResult await(
      Process process,
      CompletableFuture<String> out,
      CompletableFuture<String> err,
      Duration timeout) {
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new SshHostException(
            SshFailure.HOST_UNREACHABLE, target, "no answer within " + timeout, null);
      }
      SshResult result = new SshResult(process.exitValue(), awaitQuietly(out), awaitQuietly(err));
      if (result.exitCode() == SshResult.CLIENT_FAILED) {
        ClientErrors.classify(result.stderr())
            .ifPresent(
                failure -> {
                  throw new SshHostException(failure, target, result.stderr().strip(), null);
                });
      }
      return result;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      throw new SshHostException(SshFailure.HOST_UNREACHABLE, target, "interrupted", e);
    }
  }

  private static CompletableFuture<String> readAsync(InputStream in) {
    CompletableFuture<String> text = new CompletableFuture<>();
    Thread.ofVirtual()
        .name("paddock-ssh-read")
        .start(
            () -> {
              try (in) {
                text.complete(new String(in.readAllBytes(), StandardCharsets.UTF_8));
              } catch (IOException e) {
                text.complete("");
              }
            });
    return text;
  }

  /** The first line, then the rest drained in the background (so the pipe never fills). */
  private static CompletableFuture<String> firstLine(InputStream in) {
    CompletableFuture<String> line = new CompletableFuture<>();
    Thread.ofVirtual()
        .name("paddock-ssh-master")
        .start(
            () -> {
              try (in) {
                StringBuilder text = new StringBuilder();
                for (int c; (c = in.read()) >= 0 && c != '\n'; ) {
                  text.append((char) c);
                }
                line.complete(text.toString().strip());
                in.transferTo(OutputStream.nullOutputStream());
              } catch (IOException e) {
                line.complete("");
              }
            });
    return line;
  }

  /**
   * What the client wrote to stderr, once it has ended (given a moment to end on its own: it prints
   * its reason, then exits); the file is removed.
   */
  private static String reasonOnceEnded(Process process, Path errorFile) {
    try {
      if (!process.waitFor(2, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(5, TimeUnit.SECONDS);
      }
      return Files.readString(errorFile, StandardCharsets.UTF_8);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      return "";
    } catch (IOException e) {
      return "";
    } finally {
      deleteQuietly(errorFile);
    }
  }

  private Path errorFile() {
    try {
      return Files.createTempFile("paddock-ssh-", ".err");
    } catch (IOException e) {
      throw new SshHostException(
          SshFailure.HOST_UNREACHABLE,
          target,
          "cannot create a file for the OpenSSH client's errors: " + e.getMessage(),
          e);
    }
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // a temp file left: harmless
    }
  }

  private static String awaitQuietly(CompletableFuture<String> text) {
    try {
      return text.get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    } catch (ExecutionException | TimeoutException e) {
      return "";
    }
  }

  private static void closeQuietly(OutputStream out) {
    try {
      out.close();
    } catch (IOException e) {
      // The client has exited already: there is nobody left to tell that input ended.
    }
  }
}
