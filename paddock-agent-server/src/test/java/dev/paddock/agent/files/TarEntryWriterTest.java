package dev.paddock.agent.files;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.file.attribute.FileTime;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.junit.jupiter.api.Test;

/** A file whose size changes between the header and the copy must not misalign the archive. */
class TarEntryWriterTest {
  private static final FileTime EPOCH = FileTime.fromMillis(0);

  @Test
  void shrunkAndGrownFilesKeepTheHeaderSizeAndLaterEntriesIntact() throws Exception {
    ByteArrayOutputStream archive = new ByteArrayOutputStream();
    try (TarEntryWriter tar = new TarEntryWriter(archive)) {
      long shrunk =
          tar.file("shrunk", 0644, EPOCH, 10, new ByteArrayInputStream(new byte[] {1, 2, 3, 4}));
      long grown = tar.file("grown", 0644, EPOCH, 3, new ByteArrayInputStream(new byte[600]));
      tar.file("after", 0644, EPOCH, 2, new ByteArrayInputStream(new byte[] {7, 8}));
      tar.finish();
      assertThat(shrunk).isEqualTo(4);
      assertThat(grown).isEqualTo(3);
    }

    try (TarArchiveInputStream in =
        new TarArchiveInputStream(new ByteArrayInputStream(archive.toByteArray()))) {
      TarArchiveEntry first = in.getNextEntry();
      assertThat(first.getName()).isEqualTo("shrunk");
      assertThat(in.readAllBytes()).containsExactly(1, 2, 3, 4, 0, 0, 0, 0, 0, 0);
      assertThat(in.getNextEntry().getSize()).isEqualTo(3);
      assertThat(in.readAllBytes()).hasSize(3);
      assertThat(in.getNextEntry().getName()).isEqualTo("after");
      assertThat(in.readAllBytes()).containsExactly(7, 8);
      assertThat(in.getNextEntry()).isNull();
    }
  }
}
