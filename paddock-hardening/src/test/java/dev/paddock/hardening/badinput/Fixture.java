package dev.paddock.hardening.badinput;

import java.nio.file.Path;

/**
 * What the suite set up before firing: Alice's sandbox A and Bob's sandbox B, their agents, every
 * key (valid and revoked), Alice's workspace and a canary directory outside it.
 */
record Fixture(
    int controlPlanePort,
    String adminKey,
    String aliceId,
    String aliceKey,
    String bobId,
    String bobKey,
    String carolId,
    String carolKeyId,
    String revokedUserKey,
    String sandboxA,
    String sessionA,
    int agentA,
    String sandboxB,
    String sessionB,
    int agentB,
    String revokedSession,
    Path workspace,
    Path canary,
    String canaryToken) {}
