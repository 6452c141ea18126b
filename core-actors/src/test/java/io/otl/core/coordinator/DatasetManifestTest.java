package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DatasetManifestTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aManifestRecordedBeforeSelectionCountsStillReadsBack() throws Exception {
    DatasetManifest old = JSON.readValue("""
        {"path":"/d/job-1.jsonl","count":2,"sha256":"ab","sessionIds":["s1","s2"],"piiFindings":[],"format":"sft"}
        """, DatasetManifest.class);
    assertEquals(List.of("s1", "s2"), old.sessionIds());
    assertEquals(0, old.seen());
    assertEquals(Map.of(), old.exclusions());
  }

  @Test
  void theSummaryListsExclusionsLargestFirstWithGroupedNumbers() throws Exception {
    DatasetManifest m = new DatasetManifest("/d/x.jsonl", 0, "", List.of(), List.of(), "sft", 1204,
        Map.of("pii", 12, "below-sft-min-reward", 880, "below-min-quality", 312));
    assertEquals("1,204 seen: 880 below-sft-min-reward, 312 below-min-quality, 12 pii", m.selectionSummary());
    assertEquals(m, JSON.readValue(JSON.writeValueAsString(m), DatasetManifest.class));
    assertEquals("3 seen: none excluded", DatasetManifest.selectionSummary(3, Map.of()));
  }
}
