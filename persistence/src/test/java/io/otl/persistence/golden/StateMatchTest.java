package io.otl.persistence.golden;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class StateMatchTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static String diff(String recorded, String now) throws Exception {
    return StateMatch.difference(JSON.readTree(recorded), JSON.readTree(now), "");
  }

  @Test
  void aFieldAddedSinceIsIgnoredAndNumbersCompareByValue() throws Exception {
    assertNull(diff("{\"a\":1,\"b\":[{\"x\":2.0}]}", "{\"b\":[{\"x\":2,\"y\":true}],\"a\":1,\"c\":null}"));
  }

  @Test
  void aMissingOrChangedFieldIsADifferenceNamedByItsPath() throws Exception {
    assertEquals(".b[0].x: recorded, missing now", diff("{\"b\":[{\"x\":2}]}", "{\"b\":[{\"y\":2}]}"));
    assertEquals(".b[0].x: recorded 2 but was 3", diff("{\"b\":[{\"x\":2}]}", "{\"b\":[{\"x\":3}]}"));
    assertEquals(".b: recorded [1] but was [1,2]", diff("{\"b\":[1]}", "{\"b\":[1,2]}"));
    assertEquals(".s: recorded \"a\" but was null", diff("{\"s\":\"a\"}", "{\"s\":null}"));
  }
}
