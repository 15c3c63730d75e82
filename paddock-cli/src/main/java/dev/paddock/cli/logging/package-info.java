/**
 * The control plane's one log: a small SLF4J provider writing one line per event to standard error,
 * as text or JSON lines ({@code PADDOCK_LOG_FORMAT=json}). Everything in the {@code paddock server}
 * JVM logs through it: SLF4J users directly, the backends' and paddock-http's {@code System.Logger}
 * through {@code slf4j-jdk-platform-logging}.
 */
package dev.paddock.cli.logging;
