package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigValue;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@link EnvironmentVariables#BY_KEY} is what the node's {@code .conf} files substitute: a key that
 * gains a {@code ${?OTL_X}} without an entry would be refused without its variable's name.
 */
class EnvironmentVariablesTest {
  private static final Pattern SUBSTITUTION = Pattern.compile("\\$\\{\\?(OTL_[A-Z_]+)}");

  @Test
  void everySubstitutedVariableIsKnownByItsKey() throws IOException {
    ClassLoader loader = getClass().getClassLoader();
    Map<String, Object> markers = new HashMap<>();
    // The files these two include (persistence's reference.conf: kafka.conf, …) hold variables too.
    for (String resource : new String[] {"reference.conf", "otl-node.conf", "otl-persistence.conf", "kafka.conf",
        "serialization.conf", "read-side.conf"}) {
      for (URL url : Collections.list(loader.getResources(resource))) {
        try (InputStream in = url.openStream()) {
          Matcher m = SUBSTITUTION.matcher(new String(in.readAllBytes(), StandardCharsets.UTF_8));
          while (m.find()) markers.put(m.group(1), "marker:" + m.group(1));
        }
      }
    }
    // Resolved against markers instead of the real environment: each key then holds its variable's name.
    Config resolved = ConfigFactory.parseResources(loader, "otl-node.conf")
        .withFallback(ConfigFactory.parseResources(loader, "reference.conf"))
        .withFallback(ConfigFactory.parseMap(markers))
        .resolve(ConfigResolveOptions.noSystem());
    Map<String, String> found = new TreeMap<>();
    for (Map.Entry<String, ConfigValue> e : resolved.entrySet()) {
      if (e.getValue().unwrapped() instanceof String s && s.startsWith("marker:") && !markers.containsKey(e.getKey())) {
        found.put(e.getKey(), s.substring("marker:".length()));
      }
    }
    assertTrue(found.containsKey("agentscope.training.http.port"), "the scan found the node's variables: " + found);
    assertEquals(found, new TreeMap<>(EnvironmentVariables.BY_KEY));
  }
}
