package io.otl.bench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.cbor.CBORFactory;
import com.fasterxml.jackson.dataformat.smile.SmileFactory;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.CoordinatorEvents.TrajectoryPooled;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import io.otl.core.session.SessionSettings;
import io.otl.persistence.schema.PersistedCodec;
import io.otl.persistence.schema.PersistedTypes;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.serialization.jackson.JacksonObjectMapperProvider;

/**
 * Bench codec (issue #18): the journal codec ({@link PersistedCodec}, what {@code otl-persisted} runs for
 * every journal row) with the production JSON mapper, and with the same mapper configuration on a CBOR
 * and on a Smile factory. No database, no node: thread CPU time of the encoding and decoding alone.
 *
 * <p>The events are what W1 writes, built the same way: EventGen's 20-event sessions in requests of 5,
 * through the session's own {@code RecordPlanner} (the function AgentSession persists the result of), so
 * each session yields its SessionStarted, messages, tool calls, reasoning steps, task result and tagged
 * TrajectoryCompleted; plus the coordinator's TrajectoryPooled for it. The mappers come from Pekko's
 * {@link JacksonObjectMapperProvider} for the {@code jackson-json} binding, as {@code PersistedSerializer}
 * gets its own, with the binary factory handed in as Pekko's {@code jackson-cbor} binding does.
 *
 * <p>After {@code --warmup-rounds} rounds (C2 compiles the hot paths), {@code --rounds} measured rounds;
 * the formats take turns within each round (the order rotates) so that the machine's load falls on all
 * three alike. Every event is checked to read back equal to itself in every format and round (outside
 * the timed loops). Not a test: nothing asserts a time.
 */
final class CodecFormats {
  private CodecFormats() {}

  private static final String[] FORMATS = {"json", "cbor", "smile"};

  static Result run(Args args) throws Exception {
    int sessions = args.integer("sessions", 300);
    int events = args.integer("events", 20);
    int batch = args.integer("batch", 5);
    int warmupRounds = args.integer("warmup-rounds", 150);
    int rounds = args.integer("rounds", 30);
    // W1's JVM CPU per accepted event the shares are taken of: warm node, session 29 (0.10 CPU-s per 1,000).
    double w1UsPerEvent = args.number("w1-cpu-us-per-event", 100);
    Result r = new Result("codec", "journal codec: JSON vs CBOR vs Smile, thread CPU per event");

    Config config = ConfigFactory.parseString("pekko.actor.provider = local\npekko.loglevel = WARNING")
        .withFallback(ConfigFactory.load());
    ActorSystem system = ActorSystem.create("codec-bench", config);
    Map<String, PersistedCodec> codecs = new LinkedHashMap<>();
    try {
      JacksonObjectMapperProvider provider = JacksonObjectMapperProvider.get(system);
      codecs.put("json", new PersistedCodec(provider.getOrCreate("jackson-json", Optional.empty()),
          PersistedTypes.ALL));
      codecs.put("cbor", new PersistedCodec(binary(provider, new CBORFactory()), PersistedTypes.ALL));
      codecs.put("smile", new PersistedCodec(binary(provider, new SmileFactory()), PersistedTypes.ALL));
      SessionSettings settings = SessionSettings.fromConfig(config.getConfig("agentscope.training"));

      List<Object> mix = mix(sessions, events, batch, settings);
      String[] manifests = new String[mix.size()];
      for (int k = 0; k < mix.size(); k++) manifests[k] = codecs.get("json").manifest(mix.get(k));
      int n = mix.size();
      long inputs = (long) sessions * events;

      java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
      com.sun.management.ThreadMXBean alloc = mx instanceof com.sun.management.ThreadMXBean s ? s : null;
      Map<String, double[]> encNs = new LinkedHashMap<>();
      Map<String, double[]> decNs = new LinkedHashMap<>();
      Map<String, double[]> encAlloc = new LinkedHashMap<>();
      Map<String, double[]> decAlloc = new LinkedHashMap<>();
      Map<String, Long> bytes = new LinkedHashMap<>();
      Map<String, Map<String, long[]>> bytesByType = new LinkedHashMap<>();
      for (String f : FORMATS) {
        encNs.put(f, new double[rounds]);
        decNs.put(f, new double[rounds]);
        encAlloc.put(f, new double[rounds]);
        decAlloc.put(f, new double[rounds]);
      }
      long pid = ProcessHandle.current().pid();
      Map<String, Double> jitBefore = null;
      double loadAtMeasure = Machine.load1();
      byte[][] rows = new byte[n][];
      for (int round = 0; round < warmupRounds + rounds; round++) {
        if (round == warmupRounds) {
          jitBefore = Cpu.jit(pid);
          loadAtMeasure = Machine.load1();
        }
        for (int j = 0; j < FORMATS.length; j++) {
          String f = FORMATS[(round + j) % FORMATS.length];
          PersistedCodec codec = codecs.get(f);
          Object[] back = new Object[n];
          long a0 = alloc == null ? 0 : alloc.getCurrentThreadAllocatedBytes();
          long t0 = mx.getCurrentThreadCpuTime();
          for (int k = 0; k < n; k++) rows[k] = codec.toBinary(mix.get(k));
          long t1 = mx.getCurrentThreadCpuTime();
          long a1 = alloc == null ? 0 : alloc.getCurrentThreadAllocatedBytes();
          for (int k = 0; k < n; k++) back[k] = codec.fromBinary(rows[k], manifests[k]);
          long t2 = mx.getCurrentThreadCpuTime();
          long a2 = alloc == null ? 0 : alloc.getCurrentThreadAllocatedBytes();
          for (int k = 0; k < n; k++) {
            if (!mix.get(k).equals(back[k])) {
              throw new IllegalStateException(f + ": " + manifests[k] + " did not read back equal: wrote "
                  + mix.get(k) + ", read " + back[k]);
            }
          }
          if (round == 0) {
            long total = 0;
            Map<String, long[]> byType = new TreeMap<>();
            for (int k = 0; k < n; k++) {
              total += rows[k].length;
              long[] c = byType.computeIfAbsent(manifests[k], m -> new long[2]);
              c[0] += rows[k].length;
              c[1]++;
            }
            bytes.put(f, total);
            bytesByType.put(f, byType);
          }
          if (round >= warmupRounds) {
            int m = round - warmupRounds;
            encNs.get(f)[m] = (t1 - t0) / (double) n;
            decNs.get(f)[m] = (t2 - t1) / (double) n;
            encAlloc.get(f)[m] = (a1 - a0) / (double) n;
            decAlloc.get(f)[m] = (a2 - a1) / (double) n;
          }
        }
      }
      double jitMs = Cpu.grown(jitBefore, Cpu.jit(pid)) * 1000;

      r.figure("sessions", sessions).figure("inputsPerSession", events).figure("eventsPerRequest", batch)
          .figure("rowsPerRound", n).figure("rowsPerInput", n / (double) inputs)
          .figure("warmupRounds", warmupRounds).figure("rounds", rounds)
          .figure("roundTripsChecked", (long) n * (warmupRounds + rounds) * FORMATS.length)
          .figure("load1AtMeasuredStart", loadAtMeasure)
          .figure("jitCpuMsDuringMeasuredRounds", jitMs)
          .figure("w1CpuUsPerEventAssumed", w1UsPerEvent);
      double jsonEnc = median(encNs.get("json"));
      double jsonDec = median(decNs.get("json"));
      double jsonBytes = bytes.get("json") / (double) n;
      StringBuilder headline = new StringBuilder();
      for (String f : FORMATS) {
        double enc = median(encNs.get(f));
        double dec = median(decNs.get(f));
        double perRow = bytes.get(f) / (double) n;
        r.figure(f + ".encodeNsPerRow.median", enc)
            .figure(f + ".encodeNsPerRow.min", min(encNs.get(f)))
            .figure(f + ".encodeNsPerRow.max", max(encNs.get(f)))
            .figure(f + ".decodeNsPerRow.median", dec)
            .figure(f + ".decodeNsPerRow.min", min(decNs.get(f)))
            .figure(f + ".decodeNsPerRow.max", max(decNs.get(f)))
            .figure(f + ".encodeAllocBytesPerRow", median(encAlloc.get(f)))
            .figure(f + ".decodeAllocBytesPerRow", median(decAlloc.get(f)))
            .figure(f + ".bytesPerRow", perRow)
            .figure(f + ".bytesVsJson", perRow / jsonBytes);
        Map<String, Object> types = new LinkedHashMap<>();
        for (var e : bytesByType.get(f).entrySet()) types.put(e.getKey(), e.getValue()[0] / e.getValue()[1]);
        r.figure(f + ".bytesPerRowByManifest", types);
        // W1 writes every row once (rowsPerInput rows per accepted event); a read of every row (replay,
        // audit, export) is the upper bound of what the read side adds per event.
        double rowsPerInput = n / (double) inputs;
        double writePercent = 100 * (enc - jsonEnc) * rowsPerInput / (w1UsPerEvent * 1000);
        double writeReadPercent = 100 * (enc + dec - jsonEnc - jsonDec) * rowsPerInput / (w1UsPerEvent * 1000);
        r.figure(f + ".w1CpuChangePercentWriteOnly", writePercent)
            .figure(f + ".w1CpuChangePercentWriteAndReadEveryRow", writeReadPercent);
        headline.append(String.format("%s enc %.0f / dec %.0f ns, %.0f B; ", f, enc, dec, perRow));
      }
      r.headline = headline.toString().replaceAll("; $", "");
      if (args.flag("raw")) {
        for (String f : FORMATS) {
          r.figure(f + ".encodeNsPerRow.rounds", Arrays.toString(encNs.get(f)));
          r.figure(f + ".decodeNsPerRow.rounds", Arrays.toString(decNs.get(f)));
        }
      }
    } finally {
      system.terminate();
    }
    return r;
  }

  /** The {@code jackson-json} binding's configuration on {@code factory} (what jackson-cbor does with its own). */
  private static ObjectMapper binary(JacksonObjectMapperProvider provider, JsonFactory factory) {
    return provider.create("jackson-json", Optional.of(factory));
  }

  /** W1's rows: each session's events as its planner produces them, and the coordinator's TrajectoryPooled. */
  static List<Object> mix(int sessions, int events, int batch, SessionSettings settings) throws Exception {
    Class<?> plannerClass = Class.forName("io.otl.core.session.RecordPlanner");
    Constructor<?> newPlanner = plannerClass.getDeclaredConstructor(String.class, SessionSettings.class);
    newPlanner.setAccessible(true);
    Method plan = plannerClass.getDeclaredMethod("plan", AgentSession.State.class, String.class, List.class,
        Instant.class);
    plan.setAccessible(true);
    Method storeEvents = Class.forName("io.otl.core.session.RecordPlanner$Store").getDeclaredMethod("events");
    storeEvents.setAccessible(true);
    List<List<List<SessionInput>>> payloads = Ingest.prepare("codec-", sessions, events, batch, EventGen::inputs);
    List<Object> out = new ArrayList<>();
    for (int s = 0; s < sessions; s++) {
      Object planner = newPlanner.newInstance("codec-" + s, settings);
      AgentSession.State state = AgentSession.State.empty();
      for (List<SessionInput> request : payloads.get(s)) {
        Object p = plan.invoke(planner, state, "bench-agent", request, Instant.now());
        if (!p.getClass().getSimpleName().equals("Store")) throw new IllegalStateException("refused: " + p);
        @SuppressWarnings("unchecked")
        List<AgentSession.Event> evs = (List<AgentSession.Event>) storeEvents.invoke(p);
        for (AgentSession.Event e : evs) {
          state = state.apply(e);
          out.add(e);
          if (e instanceof AgentSession.TrajectoryCompleted c) {
            // The coordinator's write for it (TrainingCoordinator's pool rules; no msgIds off trinity-proxy).
            out.add(new TrajectoryPooled("codec-" + s, c.modelVersion(), c.reward(), c.qualityScore(), c.at(),
                List.of(), Instant.now()));
          }
        }
      }
    }
    return out;
  }

  static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  private static double min(double[] v) {
    return Arrays.stream(v).min().orElse(Double.NaN);
  }

  private static double max(double[] v) {
    return Arrays.stream(v).max().orElse(Double.NaN);
  }
}
