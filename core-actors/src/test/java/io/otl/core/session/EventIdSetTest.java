package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class EventIdSetTest {
  @Test
  void keepsTheOrderOfAdditionAndIgnoresARepeatedId() {
    EventIdSet ids = EventIdSet.empty().with("e3").with("e1").with("e2");
    assertSame(ids, ids.with("e1"), "an id already held changes nothing");
    assertEquals(List.of("e3", "e1", "e2"), new ArrayList<>(ids));
    assertEquals(3, ids.size());
    assertTrue(ids.contains("e1"));
    assertFalse(ids.contains("e4"));
    assertFalse(ids.contains(42));
  }

  @Test
  void anOlderSetIsNotChangedByWhatIsAddedToANewerOne() {
    EventIdSet before = EventIdSet.empty().with("a");
    EventIdSet branchOne = before.with("b");
    EventIdSet branchTwo = before.with("c");
    assertEquals(Set.of("a"), before);
    assertEquals(Set.of("a", "b"), branchOne);
    assertEquals(Set.of("a", "c"), branchTwo);
    assertThrows(UnsupportedOperationException.class, () -> branchOne.add("z"));
    assertThrows(UnsupportedOperationException.class, () -> branchOne.iterator().remove());
  }

  @Test
  void equalsAnySetOfTheSameIdsAndCopiesOneInItsOrder() {
    Set<String> plain = new LinkedHashSet<>(List.of("x", "y", "z"));
    EventIdSet copy = EventIdSet.of(plain);
    assertEquals(plain, copy);
    assertEquals(copy, plain);
    assertEquals(plain.hashCode(), copy.hashCode());
    assertEquals(List.of("x", "y", "z"), new ArrayList<>(copy));
    assertSame(copy, EventIdSet.of(copy));
  }

  @Test
  void isWrittenAsTheJsonArrayASnapshotHeldBefore() throws Exception {
    ObjectMapper mapper = new ObjectMapper();
    EventIdSet ids = EventIdSet.empty().with("m1").with("d2:ab").with("feedback:f1");
    String json = mapper.writeValueAsString(ids);
    assertEquals(mapper.writeValueAsString(new LinkedHashSet<>(List.of("m1", "d2:ab", "feedback:f1"))), json);
    Set<String> read = mapper.readValue(json, new TypeReference<Set<String>>() {});
    assertEquals(ids, read);
  }

  @Test
  void aSessionStateReadFromASnapshotCarriesOnWithSharedIds() {
    AgentSession.State fromSnapshot = new AgentSession.State(SessionModel.Status.ACTIVE, "a", null, null,
        java.util.Map.of(), null, null, null, List.of(), List.of(), List.of(), List.of(), null, null, null, 0,
        new java.util.HashSet<>(Set.of("e1", "e2")));
    assertTrue(fromSnapshot.eventIds() instanceof EventIdSet);
    assertEquals(Set.of("e1", "e2"), fromSnapshot.eventIds());
  }
}
