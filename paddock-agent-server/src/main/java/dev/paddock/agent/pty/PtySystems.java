package dev.paddock.agent.pty;

import java.lang.reflect.InvocationTargetException;

/**
 * Loads the {@link PtySystem} for this runtime, once, on first use. The implementation class exists
 * only in the multi-release jar's JDK 22 section (and, for tests, in a directory the build adds to
 * the class path), so on JDK 21 the load fails with {@link TerminalsUnavailableException} saying
 * what to do.
 */
final class PtySystems {
  private static final String IMPLEMENTATION = "dev.paddock.agent.pty.FfmPtySystem";

  private PtySystems() {}

  /** The system for this JVM: {@code runtimeFeature} is {@code Runtime.version().feature()}. */
  static PtySystem load(int runtimeFeature) {
    if (runtimeFeature < 22) {
      throw new TerminalsUnavailableException(
          "terminals need a JDK 22 or newer runtime (the Foreign Function API); this agent runs on"
              + " Java "
              + runtimeFeature
              + ": start it with a newer JDK");
    }
    if (!System.getProperty("os.name", "").equals("Linux")) {
      throw new TerminalsUnavailableException(
          "terminals are supported on Linux only, not on " + System.getProperty("os.name"));
    }
    try {
      return (PtySystem) Class.forName(IMPLEMENTATION).getDeclaredConstructor().newInstance();
    } catch (ClassNotFoundException e) {
      throw new TerminalsUnavailableException(
          "terminals are not in this build of the agent (no " + IMPLEMENTATION + ")", e);
    } catch (InvocationTargetException e) {
      throw new TerminalsUnavailableException(
          "terminals cannot start: " + e.getCause().getMessage(), e.getCause());
    } catch (ReflectiveOperationException | LinkageError e) {
      throw new TerminalsUnavailableException("terminals cannot start: " + e, e);
    }
  }
}
