package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * scripts/local-cluster.sh has no port options; docs/operations.md shows how to start the three
 * nodes on other ports by hand. Every port (or URL with a port) that local1.conf sets must be one of
 * the {@code -D} options the page gives, so the recipe cannot silently leave one node on 8265 or 7626.
 */
class LocalClusterPortsDocTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern PORT_IN_URL = Pattern.compile(":\\d{2,5}(/|$)");

  @Test
  void theRecipeMovesEveryPortLocal1ConfSets() throws Exception {
    String page = Files.readString(ROOT.resolve("docs/operations.md"));
    int start = page.indexOf("## A local cluster on other ports");
    assertTrue(start >= 0, "operations.md has the section the README links to");
    String section = page.substring(start, page.indexOf("\n## ", start + 1));
    Set<String> given = new TreeSet<>();
    Matcher d = Pattern.compile("-D([a-z0-9.-]+)=").matcher(section);
    while (d.find()) given.add(d.group(1));

    Config local1 = ConfigFactory.parseFile(ROOT.resolve("cluster-config/src/main/resources/local1.conf").toFile());
    Set<String> ports = new TreeSet<>();
    local1.entrySet().forEach(e -> {
      Object v = e.getValue().unwrapped();
      boolean port = e.getKey().endsWith(".port") && e.getValue().valueType() == ConfigValueType.NUMBER;
      boolean url = v instanceof String s && PORT_IN_URL.matcher(s).find();
      if (port || url) ports.add(e.getKey());
    });
    assertTrue(ports.size() >= 7, "ports found in local1.conf: " + ports);
    // The database is a server the nodes use, not a port they take (OTL_DB_URL moves it).
    ports.remove("agentscope.training.db.url");
    ports.removeAll(given);
    assertEquals(Set.of(), ports, "ports local1.conf sets that the recipe does not move: " + ports);
    // The seed list is a list: the recipe passes it as OTL_SEED_NODES, which wins over the file.
    assertTrue(local1.hasPath("pekko.cluster.seed-nodes") && section.contains("OTL_SEED_NODES="), section);
    assertTrue(Files.readString(ROOT.resolve("cluster-config/src/main/resources/otl-node.conf"))
        .contains("OTL_SEED_NODES"), "the node reads OTL_SEED_NODES");
    assertTrue(Files.readString(ROOT.resolve("README.md")).contains("docs/operations.md#a-local-cluster-on-other-ports"),
        "the README points at the recipe");
  }
}
