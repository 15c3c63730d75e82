/** Benchmarks: JMH micro-benchmarks and the end-to-end bench command. */
package dev.paddock.bench;
