/**
 * The control plane's store. {@link dev.paddock.store.SandboxStores} opens a {@link
 * dev.paddock.store.SandboxStore} over SQLite (embedded default) or PostgreSQL; implementation
 * classes are package-private. Schema changes are versioned scripts under {@code db/migration/},
 * applied at open.
 */
package dev.paddock.store;
