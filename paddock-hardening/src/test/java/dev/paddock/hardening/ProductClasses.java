package dev.paddock.hardening;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;

/** Every production class of every Paddock module, as found on this module's class path. */
final class ProductClasses {
  private static final ImportOption PRODUCTION_ONLY =
      (Location location) ->
          !location.contains("/test-classes/")
              && !location.contains("-tests.jar")
              && !location.contains("/paddock-hardening/");

  private static volatile JavaClasses classes;

  private ProductClasses() {}

  static JavaClasses all() {
    if (classes == null) {
      classes =
          new ClassFileImporter().withImportOption(PRODUCTION_ONLY).importPackages("dev.paddock");
    }
    return classes;
  }
}
