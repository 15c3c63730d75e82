package dev.paddock.agent.git;

import java.nio.file.Path;

/**
 * A directory git accepts as (part of) a work tree.
 *
 * @param dir where git runs; archives and change lists are scoped to it
 * @param root the top of the work tree ({@code git rev-parse --show-toplevel})
 */
record Repo(Path dir, Path root) {}
