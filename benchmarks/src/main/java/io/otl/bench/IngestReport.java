package io.otl.bench;

/** The figures W1–W3 share: events/s, latency, journal rows checked against what was acknowledged. */
final class IngestReport {
  private IngestReport() {}

  static void fill(Result r, Pg pg, Pg.Schema schema, String prefix, int sessions, int events, int batch,
      int concurrency, Ingest.Stats st, Double baseline, double target) {
    long expected = (long) sessions * events;
    long rows = pg.count(schema, "SELECT count(*) FROM event_journal WHERE persistence_id LIKE 'AgentSession|"
        + prefix + "%'");
    double avgPayload = pg.count(schema, "SELECT coalesce(avg(octet_length(event_payload)),0)::bigint FROM event_journal"
        + " WHERE persistence_id LIKE 'AgentSession|" + prefix + "%'");
    r.figure("sessions", sessions).figure("eventsPerSession", events).figure("eventsPerRequest", batch)
        .figure("concurrency", concurrency).figure("eventsAccepted", st.accepted()).figure("eventsExpected", expected)
        .figure("failedRequests", st.failed()).figure("seconds", st.seconds())
        .figure("eventsPerSec", st.eventsPerSec())
        .figure("journalRows", rows).figure("journalRowsPerSec", rows / st.seconds())
        .figure("avgPayloadBytes", avgPayload)
        .figure("ackP50Ms", st.latencies().percentileMs(50)).figure("ackP99Ms", st.latencies().percentileMs(99))
        .figure("ackMaxMs", st.latencies().maxMs())
        // Where the machine went: CPU seconds per 1,000 events of this JVM (node + load generator)
        // and of the benchmark PostgreSQL, and the share of the machine's cores each used.
        .figure("jvmCpuSecPer1kEvents", st.jvmCpu() * 1000 / Math.max(1, st.accepted()))
        .figure("pgCpuSecPer1kEvents", st.pgCpu() * 1000 / Math.max(1, st.accepted()))
        .figure("jvmJitCpuSecPer1kEvents", st.jitCpu() * 1000 / Math.max(1, st.accepted()))
        .figure("jvmCoresUsed", st.jvmCpu() / st.seconds()).figure("pgCoresUsed", st.pgCpu() / st.seconds())
        .figure("load1", Machine.load1())
        // Load-independent counts of the node's own threads (session 47): CPU by thread group, and bytes
        // allocated per event by group (W1's load generator completes its futures on the dispatcher).
        .figure("cpuSecPer1kEventsByThreadGroup",
            ThreadGroupCpu.per1k(st.cpuByGroup0(), st.cpuByGroup1(), Math.max(1, st.accepted())))
        .figure("allocatedBytesPerEventByThreadGroup",
            ThreadGroupCpu.perEvent(st.allocByGroup0(), st.allocByGroup1(), Math.max(1, st.accepted())));
    // Every acknowledged event is one row, plus SessionStarted and TrajectoryCompleted per session.
    boolean complete = st.accepted() == expected && rows == expected + (EventGen.complete ? 2L : 1L) * sessions;
    r.figure("countsCorrect", complete);
    r.headline = String.format("%,.0f events/s, ack p99 %.1f ms%s", st.eventsPerSec(),
        st.latencies().percentileMs(99), complete ? "" : " (COUNTS WRONG: " + st.accepted() + "/" + rows + ")");
    if (baseline != null) {
      r.ratioToBaseline = st.eventsPerSec() / baseline;
      r.target = "≥ " + target + " × baseline";
      r.pass = complete && r.ratioToBaseline >= target;
    }
  }
}
