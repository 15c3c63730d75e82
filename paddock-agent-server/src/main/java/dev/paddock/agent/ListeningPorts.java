package dev.paddock.agent;

import dev.paddock.agent.user.FsIds;
import dev.paddock.agent.user.RunAs;
import dev.paddock.http.Call;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * {@code GET /api/ports}: the TCP ports a process of this agent's own tree listens on, so the
 * gateway can refuse a port route to a socket some other process of the host owns (on the process
 * backend and with host networking every sandbox shares the host's ports). A socket counts when its
 * inode, in LISTEN state in {@code /proc/net/tcp} or {@code tcp6}, is open as {@code
 * socket:[inode]} in a {@code /proc/<pid>/fd} of one of the agent's descendants; the agent's own
 * port is left out. A process of the command user whose fds the agent may not read (an agent in a
 * container has no {@code CAP_SYS_PTRACE}) is read again with that user's file-system ids ({@link
 * FsIds}). The work is bounded ({@link #MAX_PROCESSES}, {@link #MAX_FDS}): a tree larger than that
 * is listed as far as the bounds reach, never with an error. Stateless and thread-safe.
 */
final class ListeningPorts {
  static final String ROUTE = "/api/ports";
  static final int MAX_PROCESSES = 4096;
  static final int MAX_FDS = 65_536;
  private static final String LISTEN = "0A"; // TCP_LISTEN in include/net/tcp_states.h

  private final Path proc;
  private final Supplier<Stream<ProcessHandle>> tree;
  private final IntSupplier ownPort;
  private final Optional<RunAs> commandUser;
  private volatile Optional<FsIds> fsIds;

  /** One listening socket: its port and the address it is bound to. */
  record Listening(int port, String address) {}

  /**
   * Reads {@code proc} (normally {@code /proc}) for the processes {@code tree} names, leaving out
   * {@code ownPort}; processes the agent may not read are read as {@code commandUser}, if any.
   */
  ListeningPorts(
      Path proc,
      Supplier<Stream<ProcessHandle>> tree,
      IntSupplier ownPort,
      Optional<RunAs> commandUser) {
    this.proc = proc;
    this.tree = tree;
    this.ownPort = ownPort;
    this.commandUser = commandUser;
  }

  void handle(Call call) throws IOException {
    List<Map<String, Object>> ports = new ArrayList<>();
    for (Listening listening : list()) {
      Map<String, Object> item = new LinkedHashMap<>();
      item.put("port", listening.port());
      item.put("address", listening.address());
      ports.add(item);
    }
    call.sendJson(200, Map.of("ports", ports));
  }

  /** The listening sockets of the tree, by port then address. */
  List<Listening> list() {
    Set<Long> inodes = socketInodes();
    if (inodes.isEmpty()) {
      return List.of();
    }
    Set<Listening> found =
        new TreeSet<>(Comparator.comparingInt(Listening::port).thenComparing(Listening::address));
    int own = ownPort.getAsInt();
    for (String table : List.of("net/tcp", "net/tcp6")) {
      for (String line : lines(proc.resolve(table))) {
        parse(line)
            .filter(s -> s.listening() && inodes.contains(s.inode()) && s.port() != own)
            .ifPresent(s -> found.add(new Listening(s.port(), s.address())));
      }
    }
    return List.copyOf(found);
  }

  /** The inodes of the sockets open in the tree's processes, as far as the bounds reach. */
  private Set<Long> socketInodes() {
    Set<Long> inodes = new HashSet<>();
    List<Long> refused = new ArrayList<>();
    int[] fdsLeft = {MAX_FDS};
    try (Stream<ProcessHandle> processes = tree.get()) {
      processes
          .limit(MAX_PROCESSES)
          .takeWhile(p -> fdsLeft[0] > 0)
          .forEach(p -> fdsLeft[0] = addSockets(p.pid(), inodes, fdsLeft[0], refused));
    }
    if (!refused.isEmpty() && fdsLeft[0] > 0 && commandUser.isPresent()) {
      addAsCommandUser(refused, inodes, fdsLeft[0]);
    }
    return inodes;
  }

  /** Reads the processes the agent was refused again, with the command user's ids. */
  private void addAsCommandUser(List<Long> pids, Set<Long> inodes, int budget) {
    Optional<FsIds> ids = fsIds();
    if (ids.isEmpty()) {
      return;
    }
    try {
      ids.get()
          .callAs(
              commandUser.orElseThrow(),
              () -> {
                int left = budget;
                for (long pid : pids) {
                  left = addSockets(pid, inodes, left, new ArrayList<>());
                }
                return left;
              });
    } catch (Exception e) {
      // Cannot act as the user (no CAP_SETUID): its processes own nothing we may list.
    }
  }

  private Optional<FsIds> fsIds() {
    Optional<FsIds> loaded = fsIds;
    if (loaded == null) {
      loaded = FsIds.load(Runtime.version().feature());
      fsIds = loaded;
    }
    return loaded;
  }

  /**
   * Adds the socket inodes of one process, reading at most {@code budget} fds; the rest left. A
   * process whose fds the agent may not read is added to {@code refused}, and nothing of it
   * counted.
   */
  private int addSockets(long pid, Set<Long> inodes, int budget, List<Long> refused) {
    Set<Long> found = new HashSet<>();
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(proc.resolve(pid + "/fd"))) {
      for (Path fd : fds) {
        if (budget-- <= 0) {
          break;
        }
        socketInode(fd).ifPresent(found::add);
      }
    } catch (AccessDeniedException e) {
      refused.add(pid);
      return budget;
    } catch (IOException | SecurityException e) {
      // Gone meanwhile: it owns nothing any more.
    }
    inodes.addAll(found);
    return Math.max(budget, 0);
  }

  /** The socket an fd names; empty when it is none, or was closed meanwhile. */
  private static Optional<Long> socketInode(Path fd) throws AccessDeniedException {
    try {
      String target = Files.readSymbolicLink(fd).toString();
      if (target.startsWith("socket:[") && target.endsWith("]")) {
        return Optional.of(Long.parseLong(target.substring(8, target.length() - 1)));
      }
    } catch (AccessDeniedException e) {
      throw e; // another user's process: the caller may read it as that user
    } catch (IOException | NumberFormatException e) {
      // Closed meanwhile: nothing to count.
    }
    return Optional.empty();
  }

  private static List<String> lines(Path table) {
    try {
      return Files.readAllLines(table);
    } catch (IOException e) {
      return List.of(); // no IPv6 (or no /proc): no sockets of that family
    }
  }

  /** One row of {@code /proc/net/tcp*}, the fields we need. */
  record Socket(int port, String address, boolean listening, long inode) {}

  /**
   * Parses a row ({@code sl local rem st tx:rx tr:when retr uid timeout inode ...}); the header and
   * malformed rows give empty. The local address is the kernel's hex of the address in host byte
   * order, 32 bits at a time (little-endian on every platform we run on), then the port in hex.
   */
  static Optional<Socket> parse(String line) {
    String[] fields = line.strip().split("\\s+");
    if (fields.length < 10 || !fields[0].endsWith(":")) {
      return Optional.empty();
    }
    int colon = fields[1].indexOf(':');
    if (colon < 0) {
      return Optional.empty();
    }
    try {
      Optional<String> address = address(fields[1].substring(0, colon));
      int port = Integer.parseInt(fields[1].substring(colon + 1), 16);
      long inode = Long.parseLong(fields[9]);
      return address.map(a -> new Socket(port, a, fields[3].equals(LISTEN), inode));
    } catch (IllegalArgumentException e) { // bad hex or number
      return Optional.empty();
    }
  }

  private static Optional<String> address(String hex) {
    if (hex.length() != 8 && hex.length() != 32) {
      return Optional.empty();
    }
    byte[] raw = HexFormat.of().parseHex(hex);
    for (int word = 0; word < raw.length; word += 4) { // each 32-bit word is little-endian
      swap(raw, word, word + 3);
      swap(raw, word + 1, word + 2);
    }
    try {
      return Optional.of(InetAddress.getByAddress(raw).getHostAddress());
    } catch (UnknownHostException e) {
      return Optional.empty(); // impossible for 4 or 16 bytes
    }
  }

  private static void swap(byte[] raw, int i, int j) {
    byte b = raw[i];
    raw[i] = raw[j];
    raw[j] = b;
  }
}
