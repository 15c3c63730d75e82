package dev.paddock.agent.bash;

/**
 * Receives a command's output live. Calls for one channel arrive in order, from that channel's
 * reader thread; the two channels may call concurrently. {@link #finished} is called once, after
 * the last output call. A listener that throws is dropped; the command carries on.
 */
public interface OutputListener {
  /** Called once the request is accepted, before the process starts and any output. */
  default void begin(String commandId) throws Exception {}

  void output(Channel channel, byte[] data, int offset, int length) throws Exception;

  void finished(CommandResult result) throws Exception;
}
