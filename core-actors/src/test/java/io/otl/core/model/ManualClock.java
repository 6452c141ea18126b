package io.otl.core.model;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A clock the test moves by hand (thread-safe: the entity reads it on its own thread). */
final class ManualClock extends Clock {
  private final AtomicReference<Instant> now;

  ManualClock(Instant start) {
    this.now = new AtomicReference<>(start);
  }

  void advance(Duration d) {
    now.updateAndGet(t -> t.plus(d));
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}
