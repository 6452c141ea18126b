package io.otl.persistence.readside;

import java.util.BitSet;

/**
 * The orderings the live stream has delivered (and had acknowledged) since the feed started, from
 * a moving base: one bit per journal ordering, so five minutes of a busy journal (say 15k events/s)
 * take about 600 KB. The reconciliation skips these and delivers only what the live stream missed.
 */
final class DeliveredOrderings {
  private static final long MAX_SPAN = 1L << 30;

  private long base;
  private BitSet bits = new BitSet();

  DeliveredOrderings(long base) {
    this.base = base;
  }

  synchronized void add(long ordering) {
    if (ordering < base) return;
    if (ordering - base >= MAX_SPAN) {
      // far ahead of the window (never with sane settings): start over; the rescan then redelivers
      base = ordering;
      bits = new BitSet();
    }
    bits.set((int) (ordering - base));
  }

  synchronized boolean contains(long ordering) {
    return ordering >= base && ordering - base < MAX_SPAN && bits.get((int) (ordering - base));
  }

  /** Forgets everything below {@code low}: the reconciliation no longer looks there. */
  synchronized void forgetBelow(long low) {
    if (low <= base) return;
    long shift = low - base;
    bits = shift >= bits.length() ? new BitSet() : bits.get((int) shift, bits.length());
    base = low;
  }
}
