package io.otl.bench;

import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import java.util.List;
import java.util.Map;

/** W1: ingest through the embedded Java API (DataCollector.record), acknowledged once in the journal. */
final class W1Embedded {
  private W1Embedded() {}

  static Result run(Pg pg, Args args, Double baseline) throws Exception {
    int sessions = args.integer("sessions", 1000);
    int events = args.integer("events", 20);
    int batch = args.integer("batch", 5);
    int concurrency = args.integer("concurrency", 200);
    Result r = new Result("W1", "ingest, embedded API (DataCollector), PostgreSQL");
    Pg.Schema schema = pg.freshSchema("bench_w1");
    try (TrainingNode node = Nodes.start(pg, schema, args, false, Map.of())) {
      DataCollector dc = node.dataCollector();
      Ingest.Sender<List<SessionInput>> sender = (sid, inputs) -> dc.record(sid, "bench-agent", inputs)
          .thenApply(rec -> rec.accepted());
      // --warmup-sessions: a node in service has compiled its hot paths; a fifth of the run leaves the JIT busy.
      int warm = Math.max(10, args.integer("warmup-sessions", sessions / 5));
      Ingest.drive("w1warm-", Ingest.prepare("w1warm-", warm, events, batch, EventGen::inputs), concurrency, sender,
          600);
      if (!args.flag("no-analyze")) pg.analyze(schema);
      List<List<List<SessionInput>>> payloads = Ingest.prepare("w1-", sessions, events, batch, EventGen::inputs);
      Ingest.Stats st = Ingest.drive("w1-", payloads, concurrency, sender, 1800);
      IngestReport.fill(r, pg, schema, "w1-", sessions, events, batch, concurrency, st, baseline, 0.25);
      if (EventGen.complete) CoordinatorLag.fill(r, pg, schema, "w1-", sessions, java.time.Duration.ofSeconds(120));
    } finally {
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }
}
