package io.otl.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Bench codec at a tiny size: W1's rows (22 per 20-input session, plus the coordinator's one) read back
 * equal in every format (the workload throws otherwise), and the figures are there. No time asserted.
 */
class CodecFormatsSmokeTest {

  @Test
  @SuppressWarnings("unchecked")
  void everyRowReadsBackEqualInEveryFormat() throws Exception {
    Result r = CodecFormats.run(new Args(new String[] {"--sessions", "3", "--warmup-rounds", "1", "--rounds", "2"},
        0));
    assertEquals(69, ((Number) r.figures.get("rowsPerRound")).intValue(), r.figures.toString());
    assertEquals(69L * 3 * 3, ((Number) r.figures.get("roundTripsChecked")).longValue());
    for (String f : new String[] {"json", "cbor", "smile"}) {
      assertTrue(((Number) r.figures.get(f + ".bytesPerRow")).doubleValue() > 0, f);
      Map<String, Object> types = (Map<String, Object>) r.figures.get(f + ".bytesPerRowByManifest");
      assertEquals(7, types.size(), f + ": " + types.keySet());
    }
  }
}
