package io.otl.agentscope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The ten lines of docs/connect-agentscope.md are the lines AgentScopeCaptureTest runs. */
class DocExampleInSyncTest {
  @Test
  void theDocExampleIsTheTestedCode() throws Exception {
    List<String> doc = Files.readAllLines(Path.of("../../docs/connect-agentscope.md"));
    int open = doc.indexOf("## Ten lines");
    assertTrue(open >= 0, "the doc has its example section");
    List<String> example = new ArrayList<>();
    boolean in = false;
    for (String line : doc.subList(open, doc.size())) {
      if (line.equals("```java")) {
        in = true;
      } else if (in && line.equals("```")) {
        break;
      } else if (in) {
        example.add(line.strip());
      }
    }
    List<String> test = Files.readAllLines(
        Path.of("src/test/java/io/otl/agentscope/AgentScopeCaptureTest.java"));
    int begin = indexOfContaining(test, "// --- docs/connect-agentscope.md: begin");
    int end = indexOfContaining(test, "// --- docs/connect-agentscope.md: end");
    List<String> tested = test.subList(begin + 1, end).stream().map(String::strip).toList();
    assertTrue(example.size() >= 9, "the example was found: " + example);
    assertEquals(tested, example);
  }

  private static int indexOfContaining(List<String> lines, String marker) {
    for (int i = 0; i < lines.size(); i++) if (lines.get(i).contains(marker)) return i;
    throw new AssertionError("marker not found: " + marker);
  }
}
