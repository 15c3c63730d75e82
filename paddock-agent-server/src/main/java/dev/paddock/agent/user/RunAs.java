package dev.paddock.agent.user;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A numeric user and group that commands run as ({@code --run-as UID:GID}). Numbers only: the user
 * need not exist in the sandbox's {@code /etc/passwd}.
 *
 * @param uid the real and effective user id of commands, at least 0
 * @param gid the real and effective group id of commands, at least 0; no supplementary groups
 */
public record RunAs(int uid, int gid) {
  private static final Pattern UID_GID = Pattern.compile("(\\d{1,10}):(\\d{1,10})");

  public RunAs {
    if (uid < 0 || gid < 0) {
      throw new IllegalArgumentException("uid and gid must be at least 0, got " + uid + ":" + gid);
    }
  }

  /** Parses {@code UID:GID}, e.g. {@code 65534:65534}. */
  public static RunAs parse(String text) {
    Matcher m = UID_GID.matcher(text);
    if (!m.matches()) {
      throw new IllegalArgumentException("--run-as must be UID:GID (numbers), got '" + text + "'");
    }
    try {
      return new RunAs(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--run-as ids are too large: '" + text + "'", e);
    }
  }

  @Override
  public String toString() {
    return uid + ":" + gid;
  }
}
