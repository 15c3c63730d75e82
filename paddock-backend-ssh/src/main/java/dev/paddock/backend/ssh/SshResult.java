package dev.paddock.backend.ssh;

/**
 * What one command on a host gave back.
 *
 * @param exitCode the remote command's exit code, or 255 when ssh itself failed
 * @param stdout its standard output
 * @param stderr its standard error (and the client's own errors)
 */
record SshResult(int exitCode, String stdout, String stderr) {
  /** The ssh client's own failure code: no connection, refused key, wrong host key... */
  static final int CLIENT_FAILED = 255;

  boolean ok() {
    return exitCode == 0;
  }
}
