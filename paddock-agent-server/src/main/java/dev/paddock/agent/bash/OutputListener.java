package dev.paddock.agent.bash;

/**
 * Receives a command's output live. Calls for one channel arrive in order, from that channel's
 * reader thread; the two channels may call concurrently. {@link #finished} is called once, after
 * the last output call. A listener that throws is dropped; the command carries on.
 */
public interface OutputListener {
  /**
   * Called once the command is registered and started, so its id already takes stdin and signals.
   * Output and even {@link #finished} may arrive before it (from the reader threads); the listener
   * holds them until then.
   */
  default void begin(String commandId) throws Exception {}

  void output(Channel channel, byte[] data, int offset, int length) throws Exception;

  void finished(CommandResult result) throws Exception;
}
