package dev.paddock.backend.ssh;

import java.nio.file.Path;

/**
 * The agent's runtime bundle (the backend kit's {@link dev.paddock.backend.kit.RuntimeBundle}: a
 * jlink JRE, the agent jar, its JVM options and AOT cache) as this backend copies it: once per
 * host, into {@code <remote dir>/bundles/<key>/}. The key is a digest of the content, so a host
 * holding a bundle of that name holds exactly this one.
 *
 * @param dir where it is here
 * @param key its content key, also its directory name on every host
 */
record AgentBundle(Path dir, String key) {}
