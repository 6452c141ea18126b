package io.otl.persistence.golden;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.otl.persistence.schema.PersistedType;
import io.otl.persistence.schema.PersistedTypes;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A record component left out of the JSON when null ({@code @JsonInclude(NON_NULL)}) is in no
 * golden row until a scenario sets it, so the replay tests could not see it renamed or retyped
 * without a migration. Every such component of a persisted type must appear in some golden row.
 */
class GoldenOptionalFieldsTest {

  @Test
  void everyFieldLeftOutWhenNullIsInAGoldenRow() {
    List<String> missing = new ArrayList<>();
    for (PersistedType t : PersistedTypes.ALL.all()) {
      if (!t.type().isRecord()) continue;
      for (RecordComponent rc : t.type().getRecordComponents()) {
        JsonInclude include = rc.getAccessor().getAnnotation(JsonInclude.class);
        if (include == null) include = field(t.type(), rc.getName());
        if (include == null || include.value() != JsonInclude.Include.NON_NULL) continue;
        if (!goldenKeys(t).contains(rc.getName())) missing.add("  " + t.name() + "." + rc.getName());
      }
    }
    assertTrue(missing.isEmpty(), "fields no golden row holds: set them in a GoldenJournalGenerator scenario and "
        + "write a new golden journal (docs/schema-evolution.md, \"The golden journal\"):\n"
        + String.join("\n", missing));
  }

  private static JsonInclude field(Class<?> type, String name) {
    try {
      return type.getDeclaredField(name).getAnnotation(JsonInclude.class);
    } catch (NoSuchFieldException e) {
      return null;
    }
  }

  /** The top-level keys of every golden row and snapshot stored as this type, over all releases. */
  private static Set<String> goldenKeys(PersistedType t) {
    Set<String> keys = new HashSet<>();
    for (String release : GoldenFiles.releases()) {
      for (String entity : GoldenFiles.ENTITIES) {
        GoldenFiles.Fixture f = GoldenFiles.read(release, entity);
        f.rows().stream().filter(r -> isOf(t, r.manifest()))
            .forEach(r -> GoldenFiles.readable(r.payload()).fieldNames().forEachRemaining(keys::add));
        f.snapshots().stream().filter(s -> isOf(t, s.manifest()))
            .forEach(s -> GoldenFiles.readable(s.payload()).fieldNames().forEachRemaining(keys::add));
      }
    }
    return keys;
  }

  private static boolean isOf(PersistedType t, String manifest) {
    return manifest.equals(t.legacyManifest()) || manifest.equals(t.name()) || manifest.startsWith(t.name() + "#");
  }
}
