package dev.paddock.store;

/** Keeps credentials out of messages: JDBC URLs may carry a password in their parameters. */
final class Redaction {
  private Redaction() {}

  /** The URL without its parameters. */
  static String url(String jdbcUrl) {
    int query = jdbcUrl.indexOf('?');
    return query < 0 ? jdbcUrl : jdbcUrl.substring(0, query) + "?...";
  }
}
