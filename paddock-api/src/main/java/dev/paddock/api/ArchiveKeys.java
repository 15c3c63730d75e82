package dev.paddock.api;

import java.util.regex.Pattern;

/** The archive key grammar of {@link ArchiveStore}, compiled once. */
final class ArchiveKeys {
  static final Pattern KEY = Pattern.compile("[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*");
  static final Pattern DOTS = Pattern.compile("(^|/)\\.+(/|$)");

  private ArchiveKeys() {}
}
