package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValueType;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Enumeration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The keys reference.conf documents (with their defaults) and the keys the validator has a rule for
 * are one set: a key added to one place and not the other fails here, so a setting is never
 * documented without being checked, nor checked without a documented default.
 */
class OneKeySetTest {

  /** Sections whose keys are names the user chooses (agent ids, Kafka client properties, operators). */
  private static final List<String> OPEN = List.of("agents", "gateway.agents", "kafka.client", "auth.operators");

  /** Keys without a default (absent means none), documented as a commented-out example instead. */
  private static final List<String> OPTIONAL = io.otl.node.trinity.Hyperparameters.names().stream()
      .filter(h -> !List.of("learning-rate", "batch-size", "epochs", "warmup-ratio").contains(h))
      .map(h -> "training-runner.hyperparams." + h).toList();

  @Test
  void everyDocumentedKeyHasARuleAndEveryRuleADocumentedDefault() {
    Config training = TrainingSettingsValidator.defaults().getConfig(TrainingSettingsValidator.ROOT);
    Set<String> documented = new TreeSet<>();
    training.entrySet().forEach(e -> {
      if (OPEN.stream().noneMatch(s -> e.getKey().startsWith(s + "."))) documented.add(e.getKey());
    });
    Set<String> ruled = new TreeSet<>(TrainingKeys.RULES.keySet());
    ruled.removeAll(OPEN);
    ruled.removeAll(OPTIONAL);
    Set<String> noRule = new TreeSet<>(documented);
    noRule.removeAll(ruled);
    Set<String> noDefault = new TreeSet<>(ruled);
    noDefault.removeAll(documented);
    assertEquals(Set.of(), noRule, "documented in reference.conf, no rule in TrainingKeys");
    assertEquals(Set.of(), noDefault, "a rule in TrainingKeys, no default in reference.conf");
    for (String open : OPEN) {
      assertEquals(ConfigValueType.OBJECT, training.getValue(open).valueType(), open + " is a documented section");
    }
  }

  @Test
  void optionalKeysAreDocumentedAsACommentedExample() throws IOException {
    StringBuilder text = new StringBuilder();
    Enumeration<URL> files = getClass().getClassLoader().getResources("reference.conf");
    while (files.hasMoreElements()) {
      try (InputStream in = files.nextElement().openStream()) {
        text.append(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      }
    }
    for (String key : OPTIONAL) {
      String leaf = key.substring(key.lastIndexOf('.') + 1);
      assertTrue(text.indexOf("# " + leaf + " = ") >= 0, key + ": no commented example in reference.conf");
      assertTrue(TrainingKeys.RULES.containsKey(key), key + ": no rule");
    }
  }
}
