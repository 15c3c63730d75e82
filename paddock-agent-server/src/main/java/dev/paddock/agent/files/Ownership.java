package dev.paddock.agent.files;

import dev.paddock.agent.user.CommandUser;
import dev.paddock.agent.user.RunAs;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;

/**
 * Gives entries to the command user through a view bound to an open directory ({@code fchown} of
 * the entry opened with {@code O_NOFOLLOW}), never by path. Does nothing when commands run as the
 * agent.
 */
final class Ownership {
  private Ownership() {}

  static void give(PosixFileAttributeView view, CommandUser user) throws IOException {
    if (user.switchTo().isEmpty()) {
      return;
    }
    RunAs ids = user.switchTo().get();
    UserPrincipalLookupService lookup = FileSystems.getDefault().getUserPrincipalLookupService();
    // A numeric name that is no account's name is taken as the id itself.
    UserPrincipal owner = lookup.lookupPrincipalByName(Integer.toString(ids.uid()));
    GroupPrincipal group = lookup.lookupPrincipalByGroupName(Integer.toString(ids.gid()));
    view.setOwner(owner);
    view.setGroup(group);
  }
}
