package io.otl.node.config;

import java.util.regex.Pattern;

/**
 * A duration written as a plain number, which HOCON reads as milliseconds: {@code step-duration: 3600}
 * meant 3.6 s, {@code simulator --running 30} 30 ms. The configuration's rules and the simulator's
 * options refuse it and ask for the unit; zero is zero in any unit.
 */
public final class BareDurations {
  private static final Pattern NUMBER = Pattern.compile("[+-]?[0-9]+(\\.[0-9]*)?");
  private static final Pattern ZERO = Pattern.compile("[+-]?0+(\\.0*)?");

  private BareDurations() {}

  /** Whether {@code text} is a number without a unit, other than zero. */
  public static boolean withoutUnit(String text) {
    String t = text.trim();
    return NUMBER.matcher(t).matches() && !isZero(t);
  }

  /** Whether {@code text} is zero written as a plain number. */
  static boolean isZero(String text) {
    return ZERO.matcher(text.trim()).matches();
  }
}
