package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorReplies.ErrorCode;
import io.otl.core.coordinator.CoordinatorReplies.Refused;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.entity.Rejection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The coordinator's values: the persistent session map (package-info "State is immutable, with
 * structural sharing"), job statuses, refusals' HTTP kinds and the continual-training lineage.
 */
class CoordinatorValuesTest {

  @Test
  void aPersistentMapNeverChangesAnEarlierVersion() {
    PersistentMap<Integer> empty = PersistentMap.empty();
    PersistentMap<Integer> one = empty.with("b", 2);
    PersistentMap<Integer> two = one.with("a", 1);
    assertTrue(empty.isEmpty());
    assertFalse(one.isEmpty());
    assertEquals(1, one.size());
    assertNull(one.get("a"), "the earlier version is unchanged");
    assertEquals(1, two.get("a"));
    assertTrue(two.containsKey("b"));
    assertFalse(two.containsKey("c"));
    assertSame(two, two.without("c"), "removing an absent key is the same map");
    PersistentMap<Integer> removed = two.without("b");
    assertEquals(Map.of("a", 1), removed.toMap());
    assertEquals(2, two.size());
    assertThrows(NullPointerException.class, () -> one.with(null, 1));
    assertThrows(NullPointerException.class, () -> one.with("x", null));
    assertEquals("PersistentMap(2 entries)", two.toString());
  }

  @Test
  void aPersistentMapIsWrittenSortedAndReadBackEqual() {
    PersistentMap<Integer> m = PersistentMap.<Integer>empty().with("z", 26).with("a", 1).with("m", 13);
    assertEquals(List.of("a", "m", "z"), List.copyOf(m.toMap().keySet()));
    Map<String, Integer> plain = new HashMap<>(Map.of("z", 26, "a", 1, "m", 13));
    PersistentMap<Integer> read = new PersistentMap<>(plain);
    assertEquals(m, read);
    assertEquals(m.hashCode(), read.hashCode());
    assertNotEquals(m, read.with("q", 0));
    assertNotEquals(m, "a map");
    assertTrue(new PersistentMap<Integer>((Map<String, Integer>) null).isEmpty());
  }

  @Test
  void onlyRequestedSubmittedAndRunningJobsAreActive() {
    assertTrue(JobStatus.REQUESTED.isActive());
    assertTrue(JobStatus.SUBMITTED.isActive());
    assertTrue(JobStatus.RUNNING.isActive());
    assertFalse(JobStatus.SUCCEEDED.isActive());
    assertFalse(JobStatus.FAILED.isActive());
    assertFalse(JobStatus.CANCELLED.isActive());
  }

  @Test
  void refusalsMapToTheirHttpKinds() {
    assertEquals(Rejection.Kind.NOT_FOUND, new Refused(ErrorCode.NOT_FOUND, "x").rejectionKind());
    assertEquals(Rejection.Kind.CONFLICT, new Refused(ErrorCode.CONFLICT, "x").rejectionKind());
    assertEquals(Rejection.Kind.INVALID_INPUT, new Refused(ErrorCode.INVALID_INPUT, "x").rejectionKind());
  }

  @Test
  void aJobStartsFromACheckpointOnlyWhenOneIsNamed() {
    assertTrue(new DatasetLineage("stable", "v3", "s3://ckpt/v3", null, 0, null, null, 0, null, null)
        .startsFromCheckpoint());
    assertFalse(new DatasetLineage("base", null, " ", null, 0, null, null, 0, null, null).startsFromCheckpoint());
    DatasetLineage base = new DatasetLineage("base", null, null, null, 0, null, null, 0, null, null);
    assertFalse(base.startsFromCheckpoint());
    assertEquals(List.of(), base.replaySessionIds());
    assertEquals(List.of(), base.evalSessionIds());
  }

  @Test
  void aManifestIsCleanOnlyWithoutFindings() {
    assertTrue(new DatasetManifest("/d", 1, "s", null, null, "sft").clean());
    assertFalse(new DatasetManifest("/d", 1, "s", null, List.of("phone"), "sft").clean());
    assertEquals(Map.of(), new DatasetManifest("/d", 1, "s", null, null, "sft", 0, null).exclusions());
  }
}
