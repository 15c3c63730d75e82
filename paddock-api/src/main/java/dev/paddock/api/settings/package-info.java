/**
 * One typed settings layer for every component. A component declares what it reads as {@link
 * dev.paddock.api.settings.Setting}s next to the code that reads it (backends and archive stores
 * through their providers' {@code settings()}); {@link dev.paddock.api.settings.Settings} resolves
 * them against the config file, the environment and flags, with provenance, one parsing rule per
 * kind of value, errors that name the setting, and warnings for unknown names.
 */
package dev.paddock.api.settings;
