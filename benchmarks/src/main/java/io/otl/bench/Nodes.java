package io.otl.bench;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import java.util.HashMap;
import java.util.Map;

/** Starts an in-JVM node for a workload: PostgreSQL journal in the workload's schema, no simulator. */
final class Nodes {
  private Nodes() {}

  static TrainingNode start(Pg pg, Pg.Schema schema, Args args, boolean http, Map<String, Object> extra) {
    Map<String, Object> m = new HashMap<>();
    m.put("pekko.remote.artery.canonical.port", 0);
    m.put("pekko.loglevel", "WARNING");
    m.put("agentscope.training.http.enabled", http);
    m.put("agentscope.training.http.port", 0);
    m.put("agentscope.training.http.host", "127.0.0.1");
    m.put("agentscope.training.simulator.enabled", false);
    m.put("agentscope.training.training-runner.trigger.type", "manual");
    m.put("agentscope.training.training-runner.trinity-endpoint", "http://127.0.0.1:1");
    // Journal tuning knobs, for the tuning runs in BENCHMARKS.md (defaults: otl-persistence.conf).
    if (args.string("journal-batch", null) != null) m.put("jdbc-journal.batchSize", args.integer("journal-batch", 0));
    if (args.string("journal-parallelism", null) != null) {
      m.put("jdbc-journal.parallelism", args.integer("journal-parallelism", 0));
    }
    if (args.string("pool", null) != null) m.put("agentscope.training.db.max-connections", args.integer("pool", 0));
    // --set a.b=1,c.d=x: any further node settings (HOCON paths), for tuning runs.
    String set = args.string("set", "");
    for (String kv : set.split(",")) {
      int eq = kv.indexOf('=');
      if (eq > 0) m.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
    }
    m.putAll(extra);
    Config overrides = ConfigFactory.parseMap(m).withFallback(pg.nodeDb(schema));
    return TrainingNode.start(overrides);
  }
}
