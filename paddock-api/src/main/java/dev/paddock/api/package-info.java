/**
 * Paddock's public model and SPI. JDK types only: no third-party type ever appears here, so clients
 * and backends can depend on it without dragging in a stack.
 */
package dev.paddock.api;
