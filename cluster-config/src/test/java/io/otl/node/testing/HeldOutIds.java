package io.otl.node.testing;

import io.otl.persistence.export.HeldOut;
import java.util.ArrayList;
import java.util.List;

/** Session ids for tests of a job's held-out set: which ids are held out is a hash, not a choice. */
public final class HeldOutIds {
  private HeldOutIds() {}

  /** The first {@code n} ids {@code prefix0, prefix1, …} whose held-out status at {@code evalFraction} is {@code heldOut}. */
  public static List<String> of(String prefix, int n, boolean heldOut, double evalFraction) {
    List<String> out = new ArrayList<>();
    for (int i = 0; out.size() < n; i++) {
      if (HeldOut.isHeldOut(prefix + i, evalFraction) == heldOut) out.add(prefix + i);
    }
    return out;
  }
}
