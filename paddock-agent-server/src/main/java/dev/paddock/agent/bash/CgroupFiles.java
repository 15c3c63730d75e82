package dev.paddock.agent.bash;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;

/**
 * Where this process's memory cgroup files are, worked out from the texts of {@code
 * /proc/self/cgroup} and {@code /proc/self/mountinfo} (pure, so it is tested on sample texts).
 *
 * <p>A cgroup path in {@code /proc/self/cgroup} is relative to the hierarchy's root; a mount may
 * show only a subtree of it (its root field in mountinfo). On a host, or in a container without a
 * cgroup namespace, the path lies under the mount's root and the file is at the mount point plus
 * the rest of the path. In a container with its own cgroup namespace the path is {@code /} and the
 * mount point is the container's own cgroup. When neither matches (a namespace view that mountinfo
 * does not explain), the controller's mount point itself is tried last: inside a container it
 * usually is the container's cgroup.
 */
final class CgroupFiles {
  static final String V2_EVENTS = "memory.events";
  static final String V1_OOM_CONTROL = "memory.oom_control";

  private CgroupFiles() {}

  /**
   * Candidate files holding the {@code oom_kill} counter, best first: cgroup v1's memory controller
   * first when there is one (on hybrid hosts the limits live there), then cgroup v2.
   */
  static List<Path> oomCounterCandidates(String procSelfCgroup, String mountinfo) {
    LinkedHashSet<Path> candidates = new LinkedHashSet<>();
    List<Mount> mounts = Mount.parseAll(mountinfo);
    for (String line : procSelfCgroup.split("\n")) {
      // hierarchy-id:controller-list:path
      String[] parts = line.split(":", 3);
      if (parts.length == 3 && List.of(parts[1].split(",")).contains("memory")) {
        addCandidates(candidates, parts[2], mounts, false, V1_OOM_CONTROL);
      }
    }
    for (String line : procSelfCgroup.split("\n")) {
      String[] parts = line.split(":", 3);
      if (parts.length == 3 && parts[0].equals("0") && parts[1].isEmpty()) {
        addCandidates(candidates, parts[2], mounts, true, V2_EVENTS);
      }
    }
    return List.copyOf(candidates);
  }

  private static void addCandidates(
      LinkedHashSet<Path> out, String cgroup, List<Mount> mounts, boolean v2, String file) {
    List<Mount> matching = mounts.stream().filter(m -> v2 ? m.isV2() : m.isV1Memory()).toList();
    for (Mount mount : matching) {
      relative(mount.root(), cgroup)
          .ifPresent(rest -> out.add(mount.point().resolve(rest).resolve(file).normalize()));
    }
    for (Mount mount : matching) {
      out.add(mount.point().resolve(file));
    }
    if (matching.isEmpty()) {
      // No mountinfo to go by: the usual places.
      Path base = Path.of(v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory");
      relative("/", cgroup).ifPresent(rest -> out.add(base.resolve(rest).resolve(file)));
      out.add(base.resolve(file));
    }
  }

  /** {@code path} relative to {@code root} when it lies at or under it ("" for the root). */
  private static Optional<String> relative(String root, String path) {
    String r = root.endsWith("/") ? root : root + "/";
    String p = path.endsWith("/") ? path : path + "/";
    if (!p.startsWith(r)) {
      return Optional.empty();
    }
    String rest = p.substring(r.length());
    return Optional.of(rest.endsWith("/") ? rest.substring(0, rest.length() - 1) : rest);
  }

  /** One cgroup mount from mountinfo: its root within the hierarchy and where it is mounted. */
  private record Mount(String root, Path point, String type, List<String> superOptions) {
    boolean isV2() {
      return type.equals("cgroup2");
    }

    boolean isV1Memory() {
      return type.equals("cgroup") && superOptions.contains("memory");
    }

    /**
     * Fields: id parent major:minor root mount-point options [optional...] - type source
     * super-options. Only cgroup mounts are kept.
     */
    static List<Mount> parseAll(String mountinfo) {
      List<Mount> mounts = new ArrayList<>();
      for (String line : mountinfo.split("\n")) {
        String[] fields = line.trim().split(" ");
        int dash = List.of(fields).indexOf("-");
        if (dash < 5 || fields.length < dash + 4) {
          continue;
        }
        String type = fields[dash + 1];
        if (type.equals("cgroup") || type.equals("cgroup2")) {
          mounts.add(
              new Mount(
                  unescape(fields[3]),
                  Path.of(unescape(fields[4])),
                  type,
                  List.of(fields[dash + 3].split(","))));
        }
      }
      return mounts;
    }

    /** mountinfo writes space, tab, newline and backslash as octal escapes ({@code \040}). */
    private static String unescape(String field) {
      StringBuilder out = new StringBuilder(field.length());
      for (int i = 0; i < field.length(); i++) {
        char c = field.charAt(i);
        if (c == '\\'
            && i + 3 < field.length()
            && field.substring(i + 1, i + 4).matches("[0-7]{3}")) {
          out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
          i += 3;
        } else {
          out.append(c);
        }
      }
      return out.toString();
    }
  }
}
