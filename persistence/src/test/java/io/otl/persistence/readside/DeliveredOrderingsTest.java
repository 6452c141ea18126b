package io.otl.persistence.readside;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class DeliveredOrderingsTest {
  @Test
  void remembersDeliveredOrderingsAboveTheBaseAndForgetsBelowTheLowWater() {
    DeliveredOrderings d = new DeliveredOrderings(100);
    d.add(50); // below the base: unknown, so a rescan delivers it
    d.add(101);
    d.add(150);
    d.add(5000);
    assertFalse(d.contains(50));
    assertTrue(d.contains(101));
    assertFalse(d.contains(102));
    assertTrue(d.contains(150));
    d.forgetBelow(120);
    assertFalse(d.contains(101));
    assertTrue(d.contains(150));
    assertTrue(d.contains(5000));
    d.forgetBelow(10_000);
    assertFalse(d.contains(5000));
    d.add(10_001);
    assertTrue(d.contains(10_001));
  }

  @Test
  void rebasingBelowTheBaseKeepsWhatWasDeliveredAndRemembersWhatARescanDeliversThere() {
    DeliveredOrderings d = new DeliveredOrderings(420); // a feed restarted at stored offset 420
    d.add(421);
    d.add(500);
    d.rebase(0); // the first rescan reads the window from 0
    assertTrue(d.contains(421));
    assertTrue(d.contains(500));
    assertFalse(d.contains(10));
    d.add(10); // delivered by that rescan: the next one skips it
    assertTrue(d.contains(10));
    d.rebase(0);
    assertTrue(d.contains(10));
    assertTrue(d.contains(500));
    d.rebase(100); // the window moved on
    assertFalse(d.contains(10));
    assertTrue(d.contains(421));
  }
}
