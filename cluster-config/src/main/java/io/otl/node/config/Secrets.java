package io.otl.node.config;

import java.util.Locale;

/** Which configuration keys hold secrets, whose values must never be printed. */
final class Secrets {

  static final String MASK = "****";

  private static final String[] MARKERS = {"password", "secret", "token", "api-key", "apikey",
      "api_key"};

  private Secrets() {}

  /** True when any segment of the dotted key names a secret (password, secret, token, api key). */
  static boolean isSecretKey(String key) {
    String lower = key.toLowerCase(Locale.ROOT);
    if (lower.contains("auth.operators")) {
      return true; // auth.operators.<name> = <that operator's token>
    }
    for (String marker : MARKERS) {
      if (lower.contains(marker)) {
        return true;
      }
    }
    return false;
  }
}
