package dev.paddock.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.EOFException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import org.junit.jupiter.api.Test;

/**
 * What an archive failure tells the user of an I/O error: its cause, never the control plane's
 * paths nor a Java class name (the whole exception goes to the log).
 */
class ArchiveFailureMessageTest {
  @Test
  void aFileSystemErrorIsToldByItsReasonWithoutItsPaths() {
    FileSystemException full =
        new FileSystemException(
            "/var/lib/paddock/archives/x.part", null, "No space left on device");
    assertThat(WorkspaceArchiver.describe(full)).isEqualTo("No space left on device");
    assertThat(WorkspaceArchiver.describe(new AccessDeniedException("/srv/secret/path")))
        .isEqualTo("permission denied");
  }

  @Test
  void anErrorWrappedFromItsCauseIsToldByTheCauseNotItsClassName() {
    // The JDK's HTTP body streams wrap a failure as new IOException(cause): its message is then
    // "java.io.EOFException: ...".
    IOException wrapped = new IOException(new EOFException("EOF reached while reading"));
    assertThat(WorkspaceArchiver.describe(wrapped)).isEqualTo("EOF reached while reading");
    IOException wrappedOther = new IOException(new IllegalStateException("boom"));
    assertThat(WorkspaceArchiver.describe(wrappedOther)).isEqualTo("I/O error");
    assertThat(WorkspaceArchiver.describe(new IOException("the stream ended early")))
        .isEqualTo("the stream ended early");
  }
}
