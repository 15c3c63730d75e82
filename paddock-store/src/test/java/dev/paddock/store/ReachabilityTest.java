package dev.paddock.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * What {@link Reachability} learns from the connections it watches being opened, over a fake data
 * source whose next attempt the test decides: a connection error (SQLState class 08) marks the
 * database unreachable and every unit of work then fails at once; the next connection that opens
 * lifts it; other failures (a wrong password, too many clients) do not count.
 */
class ReachabilityTest {
  private static final Instant NOW = Instant.parse("2026-12-02T06:00:00Z");

  private final Reachability reachability = new Reachability(Clock.fixed(NOW, ZoneOffset.UTC));
  private final ScriptedSource source = new ScriptedSource();
  private final DataSource watched = reachability.watch(source);

  @Test
  void aRefusedConnectionMakesWorkFailAtOnceUntilAConnectionOpensAgain() throws Exception {
    source.next.set(new SQLException("Connection to 127.0.0.1:5 refused", "08001"));

    assertThatThrownBy(watched::getConnection).isInstanceOf(SQLException.class);

    assertThat(reachability.down()).hasValueSatisfying(d -> assertThat(d.since()).isEqualTo(NOW));
    assertThatThrownBy(() -> reachability.requireReachable("find sandbox 'x'"))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("cannot find sandbox 'x'")
        .hasMessageContaining("unreachable since " + NOW);

    source.next.set(null);
    try (Connection connection = watched.getConnection()) {
      assertThat(connection).isNotNull();
    }

    assertThat(reachability.down()).isEmpty();
    reachability.requireReachable("find sandbox 'x'");
  }

  @Test
  void failuresThatAreNotAboutReachingTheServerDoNotCount() {
    source.next.set(new SQLException("password authentication failed", "28P01"));
    assertThatThrownBy(watched::getConnection).isInstanceOf(SQLException.class);
    source.next.set(new SQLException("sorry, too many clients already", "53300"));
    assertThatThrownBy(() -> watched.getConnection("u", "p")).isInstanceOf(SQLException.class);

    assertThat(reachability.down()).isEmpty();
  }

  /** Fails the next attempt with the exception set, or opens a connection that does nothing. */
  private static final class ScriptedSource implements DataSource {
    final AtomicReference<SQLException> next = new AtomicReference<>();

    @Override
    public Connection getConnection() throws SQLException {
      SQLException failure = next.get();
      if (failure != null) {
        throw failure;
      }
      return (Connection)
          Proxy.newProxyInstance(
              Connection.class.getClassLoader(),
              new Class<?>[] {Connection.class},
              (proxy, method, args) -> null);
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      return getConnection();
    }

    @Override
    public PrintWriter getLogWriter() {
      return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {}

    @Override
    public void setLoginTimeout(int seconds) {}

    @Override
    public int getLoginTimeout() {
      return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
      throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> type) {
      return false;
    }
  }
}
