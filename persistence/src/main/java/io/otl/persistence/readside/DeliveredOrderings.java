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

  /**
   * Makes {@code low} the base: forgets what lies below it (the reconciliation no longer looks
   * there) or, when it is below the base, makes room to remember orderings down to it. The latter
   * is the case after a restart: the live stream starts at the stored offset, the reconciliation
   * re-reads the window below it, and what it delivers there must be remembered, or every later
   * rescan of that window delivers it again.
   */
  synchronized void rebase(long low) {
    if (low >= base) {
      forgetBelow(low);
      return;
    }
    long shift = base - low;
    if (shift + bits.length() >= MAX_SPAN) {
      // (never with sane settings) too wide to keep: start over from low; a rescan then redelivers
      bits = new BitSet();
    } else {
      BitSet moved = new BitSet(bits.length() + (int) shift);
      for (int i = bits.nextSetBit(0); i >= 0; i = bits.nextSetBit(i + 1)) moved.set(i + (int) shift);
      bits = moved;
    }
    base = low;
  }

  /** Forgets everything below {@code low}: the reconciliation no longer looks there. */
  synchronized void forgetBelow(long low) {
    if (low <= base) return;
    long shift = low - base;
    bits = shift >= bits.length() ? new BitSet() : bits.get((int) shift, bits.length());
    base = low;
  }
}
