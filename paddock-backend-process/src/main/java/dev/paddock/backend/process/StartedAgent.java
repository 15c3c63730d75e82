package dev.paddock.backend.process;

/**
 * An agent this backend instance spawned: its {@link Process} (so an exit code can be reported) and
 * its output drain. Agents adopted after a restart have neither.
 */
record StartedAgent(Process process, AgentOutput output, Marker marker) {}
