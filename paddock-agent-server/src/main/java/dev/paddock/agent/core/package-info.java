/**
 * What every part of the agent-server shares and nothing else: its configuration and the signals
 * clients may send. It depends on no other agent package but {@code user}, so the route packages
 * can all use it without a cycle through the server that wires them.
 */
package dev.paddock.agent.core;
