package io.otl.core.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock tests move by hand: the one test double time needs. */
public final class ManualClock extends Clock {
  private volatile Instant now;
  private volatile Duration tick = Duration.ZERO;

  public ManualClock(Instant start) {
    this.now = start;
  }

  public void advance(Duration d) {
    now = now.plus(d);
  }

  /** Every later read moves the clock on by {@code d} after answering: time passes between two reads. */
  public void tickOnEachRead(Duration d) {
    tick = d;
  }

  public void set(Instant instant) {
    now = instant;
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }

  @Override
  public synchronized Instant instant() {
    Instant read = now;
    now = now.plus(tick);
    return read;
  }
}
