package dev.paddock.hardening.badinput;

import dev.paddock.hardening.badinput.Probe.Credential;
import dev.paddock.hardening.badinput.Routes.Body;
import dev.paddock.hardening.badinput.Routes.Operation;
import dev.paddock.http.Json;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

/**
 * The suite's own generators, all drawn from one seeded {@link Random}: the same seed gives the
 * same inputs in the same order. Each input aims at one documented route (in turn, so every route
 * is hit) or at the HTTP layer itself. Values are hostile but the commands they may run are
 * harmless ({@code true}, {@code echo}): a command is arbitrary code by design, and the suite tests
 * input handling, not what a shell is allowed to do.
 */
final class Inputs {
  private static final Set<String> DESTRUCTIVE =
      Set.of(
          "DELETE /api/v1/sandboxes/{id}",
          "POST /api/v1/sandboxes/{id}/pause",
          "DELETE /api/v1/users/{id}",
          "DELETE /api/v1/users/{id}/api-keys/{key_id}");

  private final Random random;
  private final Fixture f;
  private final List<Operation> controlPlane;
  private final List<Operation> agent;
  private final List<String> terminals = new ArrayList<>();
  private int next;

  Inputs(long seed, Fixture fixture, List<Operation> controlPlane, List<Operation> agent) {
    this.random = new Random(seed);
    this.f = fixture;
    this.controlPlane = controlPlane;
    this.agent = agent;
  }

  /** A terminal a probe created, to aim later inputs at. */
  void terminalCreated(String id) {
    terminals.add(id);
  }

  /** The next input: every seventh at the HTTP layer, the others at each route in turn. */
  Probe next() {
    int n = next++;
    if (n % 7 == 6) {
      return raw();
    }
    int i = n - n / 7;
    int all = controlPlane.size() + agent.size();
    int k = i % all;
    return k < controlPlane.size()
        ? controlPlaneProbe(controlPlane.get(k))
        : agentProbe(agent.get(k - controlPlane.size()));
  }

  // ---------------------------------------------------------------- control plane

  private Probe controlPlaneProbe(Operation op) {
    boolean sessionRoute =
        op.template().startsWith("/api/v1/webhooks") || op.template().startsWith("/api/v1/session");
    Credential cred =
        sessionRoute && chance(0.7)
            ? pick(
                Credential.SESSION_A,
                Credential.SESSION_B,
                Credential.REVOKED_SESSION,
                Credential.WRONG,
                Credential.NONE,
                Credential.DUPLICATED,
                Credential.PADDED)
            : pick(Credential.values());
    Map<String, String> params = new LinkedHashMap<>();
    for (String p : op.pathParams()) {
      params.put(p, controlPlaneParam(op, p));
    }
    protect(op, cred, params);
    boolean privileged = !op.secured() || controlPlanePrivileged(op, cred, sessionRoute, params);
    String target = target(op, params);
    List<String> headers = new ArrayList<>(controlPlaneAuth(cred));
    byte[] body = body(op, headers);
    return probe(
        "control-plane", f.controlPlanePort(), op, cred, privileged, target, headers, body);
  }

  /** Owners and admins may succeed; a user on another's sandbox or user, never. */
  private boolean controlPlanePrivileged(
      Operation op, Credential cred, boolean sessionRoute, Map<String, String> params) {
    if (sessionRoute) {
      return cred == Credential.SESSION_A
          || cred == Credential.SESSION_B
          || cred == Credential.PADDED;
    }
    Credential as = actingAs(cred);
    if (as == Credential.ADMIN) {
      return true;
    }
    if (as != Credential.ALICE && as != Credential.BOB) {
      return false;
    }
    String id = params.getOrDefault("id", "");
    String mine = as == Credential.ALICE ? f.sandboxA() : f.sandboxB();
    String theirs = as == Credential.ALICE ? f.sandboxB() : f.sandboxA();
    String otherUser = as == Credential.ALICE ? f.bobId() : f.aliceId();
    if (op.namesSandbox()) {
      return !id.equals(theirs) || id.equals(mine);
    }
    if (op.namesUser()) {
      return !id.equals(otherUser);
    }
    return true;
  }

  /**
   * Sandbox A and B, and Alice and Bob, must live through the run: whoever may end one of them (an
   * admin, its owner) is sent at a made-up id instead. Another user still aims at the real ones.
   */
  private void protect(Operation op, Credential cred, Map<String, String> params) {
    if (!DESTRUCTIVE.contains(op.toString())) {
      return;
    }
    String id = params.getOrDefault("id", "");
    boolean alices = id.equals(f.sandboxA()) || id.equals(f.aliceId());
    boolean bobs = id.equals(f.sandboxB()) || id.equals(f.bobId());
    boolean ends =
        switch (actingAs(cred)) {
          case ADMIN -> alices || bobs;
          case ALICE -> alices;
          case BOB -> bobs;
          default -> false;
        };
    if (ends) {
      params.put("id", "sb-" + Integer.toHexString(random.nextInt()));
    }
  }

  /** A padded key, if accepted at all, acts as the key it pads (Alice's API key). */
  static Credential actingAs(Credential cred) {
    return cred == Credential.PADDED ? Credential.ALICE : cred;
  }

  private String controlPlaneParam(Operation op, String name) {
    return switch (name) {
      case "id", "sandbox_id" ->
          op.namesUser()
              ? pickWeighted(List.of(f.aliceId(), f.bobId(), f.carolId(), "u-0000"), 0.7)
              : pickWeighted(
                  List.of(
                      f.sandboxA(),
                      f.sandboxB(),
                      "sb-0000000000000000",
                      f.sandboxA() + "x",
                      f.sandboxA().toUpperCase()),
                  0.7);
      case "key_id" -> pickWeighted(List.of(f.carolKeyId(), "k-0000"), 0.5);
      case "port" ->
          pick("8080", "0", "1", "65535", "65536", "-1", "abc", "99999999999", "8080.5", "");
      case "name" ->
          pick(
              "g/workspace.tar.gz",
              "g/" + "a".repeat(300),
              "g/" + "a".repeat(5000),
              "a".repeat(5000) + "/f",
              "../..",
              "g/../../x",
              "g/x%00y",
              "é/é",
              "g",
              "g/f/h");
      case "conversation_id" -> pickWeighted(List.of("conv-" + random.nextInt(20), "conv-a"), 0.5);
      default -> hostileString();
    };
  }

  private List<String> controlPlaneAuth(Credential cred) {
    return switch (cred) {
      case ADMIN -> List.of(bearer(f.adminKey()));
      case ALICE -> List.of(bearer(f.aliceKey()));
      case BOB -> List.of(bearer(f.bobKey()));
      case REVOKED_USER -> List.of(bearer(f.revokedUserKey()));
      case SESSION_A -> List.of("X-Session-API-Key: " + f.sessionA());
      case SESSION_B -> List.of("X-Session-API-Key: " + f.sessionB());
      case REVOKED_SESSION -> List.of("X-Session-API-Key: " + f.revokedSession());
      case WRONG ->
          List.of(pick(bearer("pdk_" + "0".repeat(40)), "X-Session-API-Key: wrong", bearer("")));
      case NONE -> List.of();
      case MALFORMED ->
          List.of(
              pick(
                  "Authorization: Bearer",
                  "Authorization: Basic YWxpY2U6eA==",
                  "Authorization: bearer  " + f.aliceKey() + " extra",
                  "Authorization: " + f.aliceKey()));
      case DUPLICATED -> List.of(bearer(f.aliceKey()), bearer(f.bobKey()));
      case PADDED -> List.of(bearer(f.aliceKey() + pick(" ", "\t")));
    };
  }

  private static String bearer(String key) {
    return "Authorization: Bearer " + key;
  }

  // ---------------------------------------------------------------- agent

  private Probe agentProbe(Operation op) {
    boolean other = chance(0.1);
    int port = other ? f.agentB() : f.agentA();
    Credential cred =
        chance(0.6)
            ? Credential.SESSION_A
            : pick(
                Credential.SESSION_B,
                Credential.REVOKED_SESSION,
                Credential.WRONG,
                Credential.NONE,
                Credential.DUPLICATED,
                Credential.PADDED,
                Credential.ALICE);
    Map<String, String> params = new LinkedHashMap<>();
    for (String p : op.pathParams()) {
      params.put(p, agentParam(p));
    }
    // The suite never holds an agent's admin key: its admin routes must refuse every input.
    boolean sessionKeyOfThisAgent =
        other
            ? cred == Credential.SESSION_B
            : cred == Credential.SESSION_A || cred == Credential.PADDED;
    boolean privileged =
        !op.secured() || (!op.template().startsWith("/admin/") && sessionKeyOfThisAgent);
    List<String> headers = new ArrayList<>(agentAuth(cred));
    if (op.template().startsWith("/sockets/") || op.template().endsWith("/ws")) {
      headers.addAll(upgradeHeaders());
    }
    String target = target(op, params);
    byte[] body = body(op, headers);
    return probe(other ? "agent-B" : "agent-A", port, op, cred, privileged, target, headers, body);
  }

  private String agentParam(String name) {
    return switch (name) {
      case "id" ->
          terminals.isEmpty() || chance(0.4)
              ? hostileString()
              : terminals.get(random.nextInt(terminals.size()));
      case "name" -> pick("s1", "default", "a".repeat(65), "../x", "", "é", "a b");
      default ->
          chance(0.5)
              ? java.util.UUID.nameUUIDFromBytes(new byte[] {(byte) random.nextInt()}).toString()
              : hostileString();
    };
  }

  private List<String> agentAuth(Credential cred) {
    return switch (cred) {
      case SESSION_A -> List.of("X-Session-API-Key: " + f.sessionA());
      case SESSION_B -> List.of("X-Session-API-Key: " + f.sessionB());
      case REVOKED_SESSION -> List.of("X-Session-API-Key: " + f.revokedSession());
      case WRONG -> List.of("X-Session-API-Key: " + pick("wrong", "", f.sessionA().substring(1)));
      case DUPLICATED ->
          List.of("X-Session-API-Key: " + f.sessionA(), "X-Session-API-Key: " + f.sessionB());
      case PADDED -> List.of("X-Session-API-Key: " + f.sessionA() + pick(" ", "\t"));
      case ALICE -> List.of(bearer(f.aliceKey()));
      default -> List.of();
    };
  }

  private List<String> upgradeHeaders() {
    return switch (random.nextInt(4)) {
      case 0 -> List.of();
      case 1 ->
          List.of(
              "Upgrade: websocket",
              "Connection: Upgrade",
              "Sec-WebSocket-Version: 12",
              "Sec-WebSocket-Key: x");
      case 2 -> List.of("Upgrade: websocket", "Sec-WebSocket-Version: 13");
      default -> List.of("Upgrade: h2c", "Sec-WebSocket-Key: " + "A".repeat(5000));
    };
  }

  // ---------------------------------------------------------------- targets, values, bodies

  private String target(Operation op, Map<String, String> params) {
    boolean raw = chance(0.1);
    String path = op.template();
    for (var p : params.entrySet()) {
      // An archive's name is two segments (group/file): its slash stays a slash.
      String value =
          raw
              ? p.getValue()
              : p.getKey().equals("name") ? encodeSegments(p.getValue()) : encode(p.getValue());
      path = path.replace("{" + p.getKey() + "}", value);
    }
    StringBuilder query = new StringBuilder();
    for (String q : op.queryParams()) {
      if (chance(0.55)) {
        int times = chance(0.1) ? 2 : 1;
        for (int t = 0; t < times; t++) {
          query
              .append(query.isEmpty() ? "" : "&")
              .append(q)
              .append('=')
              .append(raw ? queryValue(q) : encode(queryValue(q)));
        }
      }
    }
    if (chance(0.08)) {
      query
          .append(query.isEmpty() ? "" : "&")
          .append(pick("unknown", "%zz", "a[]", "", "&&", "=x"))
          .append("=1");
    }
    return query.isEmpty() ? path : path + "?" + query;
  }

  private String queryValue(String name) {
    if (chance(0.3)) {
      return hostileString();
    }
    return switch (name) {
      case "path", "destination", "source" -> filePath();
      case "limit",
          "depth",
          "since",
          "from_order",
          "order__gt",
          "timeout",
          "queue_timeout",
          "mode" ->
          pick("0", "1", "100", "101", "-1", "1e3", "999999999999999999999", "0x10", "07", "NaN");
      case "wait",
          "follow",
          "eof",
          "parents",
          "gzip",
          "recursive",
          "include_hidden",
          "gitignore",
          "follow_links",
          "resend_all",
          "use_default_excludes" ->
          pick("true", "false", "1", "yes", "maybe", "TRUE", "");
      case "status" -> pick("RUNNING", "running", "PAUSED,ERROR", "BOGUS", ",,");
      case "label" -> pick("k=v", "k", "=", "a=b=c", "é=ü");
      case "id" -> pick(f.sandboxA(), f.sandboxB(), "x");
      case "session_api_key" -> pick(f.sessionA(), f.revokedSession(), "wrong");
      case "ref", "commit", "base_ref" ->
          pick(
              "HEAD",
              "HEAD~99",
              "--output=" + f.canary() + "/git-out",
              "-p",
              "$(id)",
              "main..",
              "@{-1}");
      case "format" -> pick("tar", "tar.gz", "zip", "../x");
      case "sort_order" -> pick("TIMESTAMP", "TIMESTAMP_DESC", "timestamp", "RANDOM");
      case "kind__eq" -> pick("BashCommand", "BashOutput", "Other");
      default -> hostileString();
    };
  }

  /** A path for the file routes: inside, at the edge of, and out of the workspace. */
  private String filePath() {
    String ws = f.workspace().toString();
    String canary = f.canary().toString();
    return pick(
        ws + "/inside.txt",
        ws + "/d/new.txt",
        ws + "/d",
        ws,
        ws + "/",
        ws + "/out",
        ws + "/out/secret.txt",
        ws + "/out/new.txt",
        ws + "/out/sub",
        ws + "/loop/x",
        ws + "/fifo",
        ws + "/../agent.log",
        ws + "/../paddock.json",
        ws + "/" + "../".repeat(12) + canary.substring(1) + "/new.txt",
        canary,
        canary + "/secret.txt",
        canary + "/new.txt",
        "/etc/passwd",
        "/proc/self/environ",
        "/",
        "",
        ".",
        "..",
        "inside.txt",
        "~/x",
        ws + "/\u0000x",
        ws + "/a\nb",
        ws + "/" + "a".repeat(300),
        "/" + "a".repeat(5000),
        ws + "/é😀",
        ws + "/inside.txt/",
        ws + "//d//x",
        "file://" + canary,
        ws + "/%2e%2e/x",
        ws + "/out/../out/secret.txt");
  }

  /** Strings that break parsers, paths, shells, SQL, logs and label rules. */
  private String hostileString() {
    return pick(
        "",
        " ",
        "null",
        "0",
        "-1",
        "1e309",
        "99999999999999999999999",
        "true",
        "\u0000",
        "a\u0000b",
        "é",
        "😀",
        "\uFFFF",
        "\uD800",
        "../../etc/passwd",
        "..",
        "%00",
        "%2e%2e%2f",
        "<script>",
        "'; DROP TABLE sandboxes;--",
        "${jndi:ldap://127.0.0.1/x}",
        "a".repeat(300),
        "a".repeat(5000),
        "é".repeat(20000),
        "\r\nX-Injected: 1",
        "x\"} 1\nfake_metric{a=\"b",
        "*",
        "[",
        "(?",
        "\\",
        "SIGKILL ",
        "KILL\u0000",
        "0x10",
        f.canary() + "/x");
  }

  /** Harmless commands: they write nothing and read no stdin, whatever cwd or env they get. */
  private String command() {
    return pick(
        "true",
        "echo hi",
        "pwd",
        "printf '%s' x",
        "exit 3",
        "false",
        "",
        " ",
        "echo é😀",
        "echo '\u0000'",
        "echo " + "a".repeat(100_000),
        "echo $SESSION_API_KEY $PADDOCK_ADMIN_KEY",
        "\u0000");
  }

  private Object plausible(String field) {
    return switch (field) {
      case "command" -> command();
      case "path", "source", "destination", "cwd", "working_dir" -> filePath();
      case "timeout",
          "timeout_ms",
          "limit",
          "max_results",
          "cols",
          "rows",
          "insert_line",
          "context",
          "expires_in",
          "idle_timeout" ->
          pick(0, 1, 5, 100, -1, 65536, Integer.MAX_VALUE, Long.MAX_VALUE);
      case "signal" -> pick("INT", "SIGTERM", "9", "SIGKILL ", "KILL\u0000", "BOGUS", "0", "-9");
      case "mode" -> pick("0644", "0777", "644", "9999", "-1", "rwx");
      case "name" -> pick("s1", "alice2", "a".repeat(65), "é", "");
      case "id" -> pick("conv-" + random.nextInt(20), "conv-a", "");
      case "labels" ->
          pick(
              Map.of("k", "v"),
              Map.of("", "v"),
              Map.of("a".repeat(300), "v"),
              Map.of("k", 1),
              List.of());
      case "env" ->
          pick(
              Map.of("A", "1"),
              Map.of("", "x"),
              Map.of("A=B", "1"),
              Map.of("PATH", "\u0000"),
              List.of("A=1"));
      case "resources" ->
          pick(
              Map.of("cpus", 0.5),
              Map.of("memory", "1e12"),
              Map.of("memory", -1),
              Map.of("pids", "x"));
      case "public",
          "recursive",
          "overwrite",
          "parents",
          "stdin",
          "admin",
          "hidden",
          "gitignore",
          "auto_resume" ->
          pick(true, false, "true", 1);
      case "session_api_key_sha256" -> pick(List.of("0".repeat(64)), "x", List.of());
      case "view_range" -> pick(List.of(1, 2), List.of(-1), List.of(2, 1), "1-2");
      case "pattern" -> pick("*", "**/*", "[", "(?", "a".repeat(5000), "\u0000");
      default -> pick(hostileString(), random.nextInt(), true, List.of(), Map.of());
    };
  }

  private Object hostileValue() {
    return switch (random.nextInt(12)) {
      case 0 -> null;
      case 1 -> true;
      case 2 -> Long.MIN_VALUE;
      case 3 -> 1e308;
      case 4 -> -0.5;
      case 5 -> List.of(hostileString());
      case 6 -> Map.of(hostileString(), hostileString());
      case 7 -> nested(200);
      case 8 -> java.util.Collections.nCopies(5000, 1);
      default -> hostileString();
    };
  }

  private static Object nested(int depth) {
    Object v = 1;
    for (int i = 0; i < depth; i++) {
      v = List.of(v);
    }
    return v;
  }

  private byte[] body(Operation op, List<String> headers) {
    return switch (op.body()) {
      case NONE -> chance(0.1) ? jsonText(Map.of("unexpected", true), headers) : new byte[0];
      case JSON_OBJECT -> jsonText(object(op), headers);
      case JSON_ARRAY -> jsonText(List.of(object(op), Map.of("kind", hostileString())), headers);
      case OCTETS -> octets(headers);
      case MULTIPART -> multipart(headers);
      case TAR -> tar(headers);
    };
  }

  private Map<String, Object> object(Operation op) {
    Map<String, Object> body = new LinkedHashMap<>();
    for (String field : op.fields()) {
      if (chance(0.6)) {
        body.put(field, plausible(field));
      }
    }
    if (!op.fields().isEmpty() && chance(0.5)) {
      body.put(op.fields().get(random.nextInt(op.fields().size())), hostileValue());
    }
    if (chance(0.15)) {
      body.put(pick("timout", "", "\u0000", "__proto__", "a".repeat(300)), 1);
    }
    return body;
  }

  /** JSON text, then often broken: truncated, mistyped, badly encoded, too deep, too big. */
  private byte[] jsonText(Object value, List<String> headers) {
    headers.add(
        pick(
            "Content-Type: application/json",
            "Content-Type: application/json",
            "Content-Type: text/plain",
            "Content-Type: application/json; charset=latin1"));
    byte[] text = serialised(value);
    return switch (random.nextInt(14)) {
      case 0 -> java.util.Arrays.copyOf(text, random.nextInt(Math.max(1, text.length)));
      case 1 -> concat(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF}, text);
      case 2 -> concat(text, new byte[] {(byte) 0xC3, (byte) 0x28, (byte) 0xFF, 0});
      case 3 -> "{\"a\":1,\"a\":2,}".getBytes(StandardCharsets.UTF_8);
      case 4 -> ("[".repeat(5000) + "]".repeat(5000)).getBytes(StandardCharsets.UTF_8);
      case 5 ->
          pick(
                  "",
                  " ",
                  "null",
                  "\"x\"",
                  "1",
                  "[]",
                  "{}",
                  "<xml/>",
                  "{'a':1}",
                  "{\"a\":01}",
                  "{\"a\":NaN}",
                  "/* c */{}")
              .getBytes(StandardCharsets.UTF_8);
      case 6 ->
          chance(0.2)
              ? ("{\"x\":\"" + "a".repeat(5 << 20) + "\"}").getBytes(StandardCharsets.UTF_8)
              : text;
      case 7 -> ("{\"n\":1" + "0".repeat(2000) + "}").getBytes(StandardCharsets.UTF_8);
      default -> text;
    };
  }

  /**
   * The JSON of {@code value}; a lone surrogate, which no encoder writes, as its raw CESU bytes.
   */
  private static byte[] serialised(Object value) {
    try {
      return Json.bytes(value);
    } catch (RuntimeException e) {
      return "{\"x\":\"\u00ed\u00a0\u0080\"}".getBytes(StandardCharsets.ISO_8859_1);
    }
  }

  private byte[] octets(List<String> headers) {
    headers.add("Content-Type: application/octet-stream");
    // No line ends: bytes written to a terminal or a command's stdin never run anything.
    byte[] bytes = new byte[random.nextInt(chance(0.05) ? 200_000 : 512)];
    for (int i = 0; i < bytes.length; i++) {
      byte b = (byte) random.nextInt(256);
      bytes[i] = b == '\n' || b == '\r' ? (byte) 'x' : b;
    }
    return bytes;
  }

  private byte[] multipart(List<String> headers) {
    String boundary = "b" + random.nextInt(1000);
    headers.add(
        pick(
            "Content-Type: multipart/form-data; boundary=" + boundary,
            "Content-Type: multipart/form-data; boundary=\"" + boundary + "\"",
            "Content-Type: multipart/form-data",
            "Content-Type: multipart/form-data; boundary=",
            "Content-Type: multipart/form-data; boundary=" + "x".repeat(300),
            "Content-Type: application/json"));
    String file =
        "--"
            + boundary
            + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\""
            + pick("a.txt", "../../x", "\u0000", "")
            + "\"\r\n\r\nhello\r\n";
    String end = "--" + boundary + "--\r\n";
    String body =
        switch (random.nextInt(8)) {
          case 0 -> file + end;
          case 1 -> file;
          case 2 -> "--" + boundary + "\r\nContent-Disposition: form-data\r\n\r\nx\r\n" + end;
          case 3 ->
              "--"
                  + boundary
                  + "\r\nContent-Disposition: form-data; name=\"mode\"\r\n\r\n"
                  + pick("0777", "x", "99999")
                  + "\r\n"
                  + file
                  + end;
          case 4 ->
              ("--" + boundary + "\r\nContent-Disposition: form-data; name=\"p\"\r\n\r\nx\r\n")
                      .repeat(2000)
                  + end;
          case 5 ->
              "--" + boundary + "\r\n" + "X-Header: " + "a".repeat(100_000) + "\r\n\r\nx\r\n" + end;
          case 6 -> "--wrong\r\n\r\nx\r\n--wrong--\r\n";
          default -> file.substring(0, random.nextInt(file.length()));
        };
    return body.getBytes(StandardCharsets.UTF_8);
  }

  private byte[] tar(List<String> headers) {
    headers.add("Content-Type: application/x-tar");
    String canary = f.canary().toString();
    byte[] hello = "hello".getBytes(StandardCharsets.UTF_8);
    Tar tar = new Tar();
    switch (random.nextInt(9)) {
      case 0 -> tar.file("ok.txt", hello);
      case 1 -> tar.file("../../../../../../../.." + canary + "/tar-dotdot", hello);
      case 2 -> tar.file(canary + "/tar-absolute", hello);
      case 3 -> tar.symlink("esc", canary).file("esc/tar-through-link", hello);
      case 4 -> tar.symlink("esc2", "../../../../../../../.." + canary);
      case 5 -> tar.hardLink("hard", canary + "/secret.txt");
      case 6 -> tar.entry("dev", '3', "", new byte[0]).entry("weird", 'Z', "", hello);
      case 7 -> tar.file("out/tar-through-fixture-link", hello);
      default -> tar.file("a".repeat(99), hello);
    }
    byte[] bytes = tar.bytes();
    return switch (random.nextInt(4)) {
      case 0 -> java.util.Arrays.copyOf(bytes, random.nextInt(bytes.length));
      case 1 -> octetsNoHeader(random.nextInt(3000));
      default -> bytes;
    };
  }

  private byte[] octetsNoHeader(int n) {
    byte[] bytes = new byte[n];
    random.nextBytes(bytes);
    return bytes;
  }

  private Probe probe(
      String server,
      int port,
      Operation op,
      Credential cred,
      boolean privileged,
      String target,
      List<String> headers,
      byte[] body) {
    String method = chance(0.03) ? pick("HEAD", "OPTIONS", "TRACE", "BREW") : op.method();
    return new Probe(
        server,
        port,
        Optional.of(op),
        cred,
        privileged,
        true,
        false,
        Probe.request(method, target, headers, body),
        op.toString());
  }

  // ---------------------------------------------------------------- HTTP layer

  /** Abuse of HTTP itself, over a raw socket, at either server. */
  private Probe raw() {
    boolean agentSide = chance(0.5);
    int port = agentSide ? f.agentA() : f.controlPlanePort();
    String server = agentSide ? "agent-A" : "control-plane";
    String route =
        agentSide ? "/api/file/upload?path=" + encode(f.workspace() + "/raw.txt") : "/api/v1/users";
    String auth = agentSide ? "X-Session-API-Key: " + f.sessionA() : bearer(f.adminKey());
    int kind = random.nextInt(24);
    String text =
        switch (kind) {
          case 0 -> "GET /health HTTP/1.1\nHost: x\n\n";
          case 1 ->
              "POST "
                  + route
                  + " HTTP/1.1\r\nHost: x\r\n"
                  + auth
                  + "\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n";
          case 2 -> "GET /health HTTP/1.1\r\nHost: x\r\nX-Unfinished: y\r\n";
          case 3 ->
              "POST "
                  + route
                  + " HTTP/1.1\r\nHost: x\r\n"
                  + auth
                  + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":";
          case 4 ->
              "POST "
                  + route
                  + " HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
          case 5 ->
              "POST "
                  + route
                  + " HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!";
          case 6 -> "POST " + route + " HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n";
          case 7 ->
              "GET /"
                  + "a".repeat(random.nextBoolean() ? 9000 : 1 << 20)
                  + " HTTP/1.1\r\nHost: x\r\n\r\n";
          case 8 -> "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(70_000) + "\r\n\r\n";
          case 9 -> "GET /health HTTP/1.1\r\nHost: x\r\n" + "X-H: 1\r\n".repeat(300) + "\r\n";
          case 10 -> "GET /health HTTP/1.1\r\nHost: x\r\nX-Nul: a\u0000b\r\nBad Name: 1\r\n\r\n";
          case 11 -> "GET /health HTTP/1.1\r\nHost: x\r\nX-Fold: a\r\n  folded\r\n\r\n";
          case 12 ->
              pick(
                      "GET /health HTTP/2.0",
                      "GET /health HTTP/1.2",
                      "GET /health FTP/1.0",
                      "get /health HTTP/1.1",
                      "BREW /health HTTP/1.1",
                      "G".repeat(5000) + " / HTTP/1.1",
                      "GET  /health  HTTP/1.1",
                      "GET")
                  + "\r\nHost: x\r\n\r\n";
          case 13 ->
              "POST "
                  + route
                  + " HTTP/1.1\r\nHost: x\r\n"
                  + auth
                  + "\r\nTransfer-Encoding: gzip\r\n\r\nxx";
          case 14 ->
              "POST "
                  + route
                  + " HTTP/1.1\r\nHost: x\r\n"
                  + auth
                  + "\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\nx\r\n";
          case 15 ->
              "POST "
                  + route
                  + " HTTP/1.1\r\nHost: x\r\n"
                  + auth
                  + "\r\nExpect: "
                  + pick("999-crazy", "100-continue")
                  + "\r\nContent-Length: 10\r\n\r\n";
          case 16 ->
              "GET /api/v1/users/me HTTP/1.1\r\nHost: x\r\n"
                  + bearer(f.aliceKey())
                  + "\r\n"
                  + bearer(f.bobKey())
                  + "\r\n\r\n";
          case 17 ->
              pick(
                      "GET http://evil.example/api/v1/users/me",
                      "OPTIONS *",
                      "GET *",
                      "GET ../../etc/passwd",
                      "GET /%zz",
                      "GET /%00",
                      "GET //api//v1//sandboxes",
                      "GET /health#frag",
                      "GET /health?%")
                  + " HTTP/1.1\r\nHost: x\r\n\r\n";
          case 18 -> "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n";
          case 19 -> "GET /health HTTP/1.1\r\n\r\n";
          case 20 -> "\r\n\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n";
          case 21 ->
              "GET /sockets/events?session_api_key="
                  + f.sessionA()
                  + " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
                  + pick("", "short", "A".repeat(300))
                  + "\r\nSec-WebSocket-Version: "
                  + pick("13", "8", "x")
                  + "\r\n\r\n";
          case 22 -> shortUpload(auth, route);
          default ->
              new String(octetsNoHeader(1 + random.nextInt(2000)), StandardCharsets.ISO_8859_1);
        };
    byte[] bytes =
        kind == 23
            ? text.getBytes(StandardCharsets.ISO_8859_1)
            : text.getBytes(StandardCharsets.UTF_8);
    return new Probe(
        server,
        port,
        Optional.empty(),
        Credential.NONE,
        false,
        false,
        true,
        bytes,
        "HTTP layer #" + kind);
  }

  /** D12: a whole multipart body under a Content-Length of 2 GiB, then the client's half-close. */
  private static String shortUpload(String auth, String route) {
    String body =
        "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nshort\r\n--b--\r\n";
    return "POST "
        + route
        + " HTTP/1.1\r\nHost: x\r\n"
        + auth
        + "\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 2147483648\r\n\r\n"
        + body;
  }

  // ---------------------------------------------------------------- helpers

  private boolean chance(double p) {
    return random.nextDouble() < p;
  }

  @SafeVarargs
  private <T> T pick(T... options) {
    return options[random.nextInt(options.length)];
  }

  /** One of {@code known} with probability {@code p}, else a hostile string. */
  private String pickWeighted(List<String> known, double p) {
    return chance(p) ? known.get(random.nextInt(known.size())) : hostileString();
  }

  private static String encode(String value) {
    StringBuilder s = new StringBuilder();
    for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if ((c >= 'a' && c <= 'z')
          || (c >= 'A' && c <= 'Z')
          || (c >= '0' && c <= '9')
          || c == '-'
          || c == '_'
          || c == '.'
          || c == '~') {
        s.append((char) c);
      } else {
        s.append('%').append(String.format("%02X", c));
      }
    }
    return s.toString();
  }

  private static String encodeSegments(String value) {
    List<String> segments = new ArrayList<>();
    for (String segment : value.split("/", -1)) {
      segments.add(encode(segment));
    }
    return String.join("/", segments);
  }

  private static byte[] concat(byte[] a, byte[] b) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(a);
    out.writeBytes(b);
    return out.toByteArray();
  }

  /** Which body kinds the routes of {@code ops} take (for the report). */
  static Map<Body, Long> bodies(List<Operation> ops) {
    Map<Body, Long> counts = new LinkedHashMap<>();
    for (Operation op : ops) {
      counts.merge(op.body(), 1L, Long::sum);
    }
    return counts;
  }
}
