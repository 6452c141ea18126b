package io.otl.persistence.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.otl.core.coordinator.CoordinatorEvents.JobCancelled;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * {@code JobCancelled} gained an optional {@code unconfirmed} (a cancel the backend never
 * confirmed): rows written before it read as confirmed, and a confirmed cancellation is written
 * byte for byte as before, so the golden journals stay what they are.
 */
class JobCancelledJsonTest {
  private static final Instant AT = Instant.parse("2026-01-01T00:00:00Z");
  private final PersistedCodec codec = new PersistedCodec(new ObjectMapper().registerModule(new JavaTimeModule())
      .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS), PersistedTypes.ALL);

  @Test
  void aConfirmedCancellationIsWrittenAsBeforeAndAnOldRowReadsAsConfirmed() throws Exception {
    JobCancelled confirmed = new JobCancelled("job-1-a", "stopped on the backend", AT);
    String json = new String(codec.toBinary(confirmed), StandardCharsets.UTF_8);
    assertEquals("{\"jobId\":\"job-1-a\",\"detail\":\"stopped on the backend\",\"at\":\"2026-01-01T00:00:00Z\"}", json);
    assertEquals("coordinator.job-cancelled#1", codec.manifest(confirmed));
    JobCancelled old = (JobCancelled) codec.fromBinary(json.getBytes(StandardCharsets.UTF_8),
        "coordinator.job-cancelled#1");
    assertNull(old.unconfirmed());
    assertEquals(confirmed, old);
  }

  @Test
  void anUnconfirmedCancellationKeepsWhatIsUnknown() throws Exception {
    JobCancelled unconfirmed = new JobCancelled("job-1-a", "cancelled without the backend's confirmation", AT,
        "job-1-a may still run");
    byte[] bytes = codec.toBinary(unconfirmed);
    assertFalse(new String(bytes, StandardCharsets.UTF_8).isBlank());
    assertEquals(unconfirmed, codec.fromBinary(bytes, codec.manifest(unconfirmed)));
  }
}
