package dev.paddock.agent.bash;

/** The two output streams of a command, always kept apart. */
public enum Channel {
  STDOUT,
  STDERR
}
