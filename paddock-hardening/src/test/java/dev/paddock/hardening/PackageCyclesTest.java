package dev.paddock.hardening;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import org.junit.jupiter.api.Test;

/** STYLE.md: packages form a tree of dependencies, never a cycle, in every module. */
class PackageCyclesTest {
  @Test
  void noPackageDependsOnItselfThroughOthers() {
    slices().matching("dev.paddock.(**)").should().beFreeOfCycles().check(ProductClasses.all());
  }
}
