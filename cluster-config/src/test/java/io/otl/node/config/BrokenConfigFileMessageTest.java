package io.otl.node.config;

import static io.otl.node.config.TestFiles.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A config file that does not parse is named with what is wrong and where, in the operator's words
 * (trial t175): a JSON file's message carried Jackson's "[Source: REDACTED
 * (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 1]", and a YAML file's
 * only SnakeYAML's context ("while parsing a block mapping"), not the problem it found. Neither shows
 * the file's text, which may hold a secret.
 */
class BrokenConfigFileMessageTest {

  @TempDir
  Path dir;

  @Test
  void anUnclosedJsonObjectIsNamedWithoutJacksonsSourceNote() {
    Path file = write(dir, "settings.json", "{\"agentscope\": {\"training\": {\"enabled\": true,}}");
    String message = refusal(file);
    assertEquals(file + ": not valid JSON at line 1, column 48: Unexpected end-of-input: expected close marker"
        + " for Object (start marker at line 1, column 1)", message);
  }

  @Test
  void aYamlFileSaysWhatTheParserFoundNotOnlyWhereItWas() {
    Path file = write(dir, "application.yml",
        "agentscope:\n  training:\n    enabled: true\n   data-collector: sk-secret-value\n");
    String message = refusal(file);
    assertTrue(message.startsWith(file + ": not valid YAML at line 4, column 4: while parsing a block mapping; "
        + "expected <block end>, but found"), message);
    assertFalse(message.contains("sk-secret-value"), message);
    assertFalse(message.contains("enabled: true"), message);
  }

  private static String refusal(Path file) {
    ConfigValidationException e = assertThrows(ConfigValidationException.class, () -> AgentScopeConfigLoader.load(file));
    assertEquals(1, e.errors().size(), e.errors().toString());
    return e.errors().get(0);
  }
}
