package dev.paddock.hardening;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaModifier;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * STYLE.md: no third-party types in public signatures. A public or protected member of a public
 * class names only JDK and Paddock types, so a library can be swapped without breaking a caller.
 */
class PublicSignaturesTest {
  private static final List<String> ALLOWED =
      List.of("java.", "javax.", "jdk.", "com.sun.net.httpserver.", "dev.paddock.");

  /**
   * Members that must name a library's type, each with its reason. A new entry needs one as good.
   */
  private static final Set<String> EXEMPT =
      Set.of(
          // SLF4J finds its backend through ServiceLoader: the provider is public by contract.
          "dev.paddock.cli.logging.PaddockLogProvider",
          // The agent's streaming routes write events straight into Jackson's generator (the hot
          // path of every exec); a Paddock-typed writer in front of it is still to be done.
          "dev.paddock.http.Json.generator",
          "dev.paddock.http.Json.write");

  @Test
  void theProductImportsEveryModule() {
    // A class path that lost a module would make the rule below pass vacuously.
    assertThat(ProductClasses.all().stream().map(c -> c.getPackageName()).distinct())
        .contains(
            "dev.paddock.api",
            "dev.paddock.api.spi",
            "dev.paddock.http",
            "dev.paddock.agent",
            "dev.paddock.store",
            "dev.paddock.controlplane",
            "dev.paddock.backend.process",
            "dev.paddock.backend.docker",
            "dev.paddock.server",
            "dev.paddock.client",
            "dev.paddock.cli");
  }

  @Test
  void publicMembersNameOnlyJdkAndPaddockTypes() {
    Set<String> offending = new TreeSet<>();
    for (JavaClass owner : ProductClasses.all()) {
      if (!exported(owner)) {
        continue;
      }
      owner.getRawSuperclass().ifPresent(s -> check(owner.getName() + " extends", s, offending));
      owner.getRawInterfaces().forEach(i -> check(owner.getName() + " implements", i, offending));
      for (JavaCodeUnit unit : owner.getCodeUnits()) {
        if (visible(unit.getModifiers())) {
          String where = owner.getName() + "." + unit.getName();
          unit.getParameterTypes()
              .forEach(t -> t.getAllInvolvedRawTypes().forEach(r -> check(where, r, offending)));
          unit.getReturnType().getAllInvolvedRawTypes().forEach(r -> check(where, r, offending));
          unit.getThrowsClause().getTypes().forEach(r -> check(where + " throws", r, offending));
        }
      }
      for (JavaField field : owner.getFields()) {
        if (visible(field.getModifiers())) {
          field
              .getType()
              .getAllInvolvedRawTypes()
              .forEach(r -> check(owner.getName() + "." + field.getName(), r, offending));
        }
      }
    }
    assertThat(offending).isEmpty();
  }

  private static boolean exported(JavaClass type) {
    JavaClass c = type;
    while (true) {
      if (!c.getModifiers().contains(JavaModifier.PUBLIC)
          || c.isAnonymousClass()
          || c.isLocalClass()) {
        return false;
      }
      if (c.getEnclosingClass().isEmpty()) {
        return true;
      }
      c = c.getEnclosingClass().get();
    }
  }

  private static boolean visible(Set<JavaModifier> modifiers) {
    return (modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED))
        && !modifiers.contains(JavaModifier.SYNTHETIC)
        && !modifiers.contains(JavaModifier.BRIDGE);
  }

  private static void check(String where, JavaClass type, Set<String> offending) {
    JavaClass base = type.isArray() ? type.getBaseComponentType() : type;
    if (base.isPrimitive()) {
      return;
    }
    String name = base.getName();
    boolean exempt =
        EXEMPT.stream()
            .anyMatch(
                e -> where.equals(e) || where.startsWith(e + " ") || where.startsWith(e + "."));
    if (!exempt && ALLOWED.stream().noneMatch(name::startsWith)) {
      offending.add(where + " -> " + name);
    }
  }
}
