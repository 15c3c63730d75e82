// A tiny web server for tests, run as a single-file program (java Listener.java <port-file> <text>):
// listens on a loopback port 0, writes the port to <port-file> (atomically) and answers every
// request with 200 and <text>.
public class Listener {
  public static void main(String[] args) throws Exception {
    var loopback = java.net.InetAddress.getLoopbackAddress();
    try (var server = new java.net.ServerSocket(0, 50, loopback)) {
      var file = java.nio.file.Path.of(args[0]);
      var partial = java.nio.file.Path.of(args[0] + ".partial");
      java.nio.file.Files.writeString(partial, Integer.toString(server.getLocalPort()));
      java.nio.file.Files.move(partial, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      byte[] body = args[1].getBytes(java.nio.charset.StandardCharsets.UTF_8);
      while (true) {
        try (var socket = server.accept()) {
          var in =
              new java.io.BufferedReader(
                  new java.io.InputStreamReader(
                      socket.getInputStream(), java.nio.charset.StandardCharsets.ISO_8859_1));
          for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
            // Headers are not needed.
          }
          var out = socket.getOutputStream();
          out.write(
              ("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                      + body.length
                      + "\r\nConnection: close\r\n\r\n")
                  .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
          out.write(body);
          out.flush();
        }
      }
    }
  }
}
