package io.otl.agentscope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ten lines of docs/connect-agentscope.md are the lines AgentScopeCaptureTest runs. */
class DocExampleInSyncTest {
  @Test
  void theDocExampleIsTheTestedCode() throws Exception {
    List<String> doc = Files.readAllLines(Path.of("../../docs/connect-agentscope.md"));
    int open = doc.indexOf("## Ten lines");
    assertTrue(open >= 0, "the doc has its example section");
    List<String> example = javaBlock(doc, open);
    List<String> test = Files.readAllLines(
        Path.of("src/test/java/io/otl/agentscope/AgentScopeCaptureTest.java"));
    int begin = indexOfContaining(test, "// --- docs/connect-agentscope.md: begin");
    int end = indexOfContaining(test, "// --- docs/connect-agentscope.md: end");
    List<String> tested = test.subList(begin + 1, end).stream().map(String::strip).toList();
    assertTrue(example.size() >= 9, "the example was found: " + example);
    assertEquals(tested, example);
  }

  /** The gateway lines of docs/connect-agentscope.md are the lines AgentScopeCaptureTest runs against a node. */
  @Test
  void theGatewayExampleIsTheTestedCode() throws Exception {
    List<String> doc = Files.readAllLines(Path.of("../../docs/connect-agentscope.md"));
    int open = doc.indexOf("## Through the gateway");
    assertTrue(open >= 0, "the doc has its gateway section");
    List<String> example = javaBlock(doc, open);
    List<String> test = Files.readAllLines(
        Path.of("src/test/java/io/otl/agentscope/AgentScopeCaptureTest.java"));
    int begin = indexOfContaining(test, "// --- docs/connect-agentscope.md gateway: begin");
    int end = indexOfContaining(test, "// --- docs/connect-agentscope.md gateway: end");
    List<String> tested = test.subList(begin + 1, end).stream().map(String::strip).toList();
    assertTrue(String.join("\n", example).contains("additionalHeader(\"X-Session-Id\""), "found: " + example);
    assertEquals(tested, example);
  }

  /**
   * The HTTP-sink lines, pasted where {@code agent} and {@code token} are in scope as in the ten
   * lines, compile. They once named their lambda parameter {@code agent} too: "variable agent is
   * already defined".
   */
  @Test
  void theHttpSinkLinesCompileWhereTheAgentIsInScope(@TempDir Path dir) throws Exception {
    List<String> doc = Files.readAllLines(Path.of("../../docs/connect-agentscope.md"));
    int open = indexOfContaining(doc, "For a remote");
    List<String> lines = javaBlock(doc, open);
    assertTrue(String.join("\n", lines).contains("TrajectorySink.http("), "the HTTP-sink example was found: " + lines);
    String source = "import io.agentscope.core.ReActAgent;\n"
        + "import io.agentscope.core.agent.Agent;\n"
        + "import io.otl.agentscope.*;\n"
        + "class HttpSinkSnippet {\n"
        + "  static String conversationIdOf(Agent a) { return \"conversation-1\"; }\n"
        + "  static OtlTrainingHook snippet(ReActAgent agent, String token) {\n"
        + String.join("\n", lines) + "\n"
        + "    return training;\n"
        + "  }\n"
        + "}\n";
    Path file = dir.resolve("HttpSinkSnippet.java");
    Files.writeString(file, source);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    int rc = javac.run(null, null, err, "-d", dir.resolve("out").toString(),
        "-cp", System.getProperty("java.class.path"), file.toString());
    assertEquals(0, rc, "docs/connect-agentscope.md's HTTP sink lines do not compile:\n" + err + "\n" + source);
  }

  /** The lines of the first ```java block after line {@code from}. */
  private static List<String> javaBlock(List<String> doc, int from) {
    List<String> example = new ArrayList<>();
    boolean in = false;
    for (String line : doc.subList(from, doc.size())) {
      if (line.equals("```java")) {
        in = true;
      } else if (in && line.equals("```")) {
        break;
      } else if (in) {
        example.add(line.strip());
      }
    }
    return example;
  }

  private static int indexOfContaining(List<String> lines, String marker) {
    for (int i = 0; i < lines.size(); i++) if (lines.get(i).contains(marker)) return i;
    throw new AssertionError("marker not found: " + marker);
  }
}
