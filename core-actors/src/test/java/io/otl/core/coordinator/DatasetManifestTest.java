package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

  /**
   * The sessions behind each exclusion (why a session a job took is not in its file, for the lineage) are
   * a field of their own, left out of the JSON when empty: a manifest of an earlier build reads with none
   * (its sessions' reasons are unknown) and writes back byte for byte, as the golden journals require.
   */
  @Test
  void theSessionsBehindTheExclusionsAreNamedAndOlderManifestsKeepTheirBytes() throws Exception {
    String older = "{\"path\":\"/d/x.jsonl\",\"count\":1,\"sha256\":\"ab\",\"sessionIds\":[\"s1\"],\"piiFindings\":[],"
        + "\"format\":\"sft-messages\",\"seen\":3,\"exclusions\":{\"duplicate-exact\":1,\"held-out-for-eval\":1}}";
    DatasetManifest read = JSON.readValue(older, DatasetManifest.class);
    assertEquals(Map.of(), read.excludedSessionIds());
    assertNull(read.exclusionOf("s2"), "an earlier build recorded no reason per session");
    assertEquals(older, JSON.writeValueAsString(read));

    DatasetManifest m = new DatasetManifest("/d/x.jsonl", 1, "ab", List.of("s1"), List.of(), "sft-messages", 4,
        Map.of("duplicate-exact", 2, "held-out-for-eval", 1), null,
        Map.of("duplicate-exact", List.of("s4", "s2"), "held-out-for-eval", List.of("s3")));
    assertEquals("duplicate-exact", m.exclusionOf("s2"));
    assertEquals("held-out-for-eval", m.exclusionOf("s3"));
    assertNull(m.exclusionOf("s1"), "in the file");
    assertNull(m.exclusionOf("s9"), "never given to the export");
    String json = JSON.writeValueAsString(m);
    assertTrue(json.endsWith(",\"excludedSessionIds\":{\"duplicate-exact\":[\"s2\",\"s4\"],\"held-out-for-eval\":[\"s3\"]}}"),
        "sorted, so the journal's bytes do not depend on timing: " + json);
    assertEquals(m, JSON.readValue(json, DatasetManifest.class));
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
