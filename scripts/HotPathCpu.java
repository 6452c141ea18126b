import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.otl.core.Ids;
import io.otl.core.session.AgentSession;
import io.otl.core.session.Desensitizer;
import io.otl.core.session.SessionInput;
import io.otl.core.session.SessionModel;
import io.otl.persistence.schema.PersistedCodec;
import io.otl.persistence.schema.PersistedTypes;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The application's own per-event work of W1, without the framework: validation (id rules, lengths),
 * desensitization, the state's event handler (twice per event, as the entity's draft and Pekko's
 * handler), the journal codec's write and (for replays and the feed) read. Thread CPU time per event,
 * which the machine's load moves far less than wall-clock time. Not a test; compares builds:
 *
 * <pre>
 *   java -cp benchmarks/target/benchmarks.jar scripts/HotPathCpu.java [sessions] [rounds]
 * </pre>
 *
 * The mapper is built like Pekko's jackson-json one where persisted events are concerned (jsr310,
 * dates as ISO text). Events come from the benchmarks' EventGen (20 per session, as W1).
 */
public class HotPathCpu {
  public static void main(String[] args) throws Exception {
    int sessions = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    ObjectMapper mapper = JsonMapper.builder().addModule(new JavaTimeModule()).addModule(new Jdk8Module())
        .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();
    PersistedCodec codec = new PersistedCodec(mapper, PersistedTypes.ALL);
    Desensitizer d = new Desensitizer(true, List.of("phone", "id_card", "email"), List.of());

    Class<?> gen = Class.forName("io.otl.bench.EventGen");
    Method events = gen.getDeclaredMethod("events", String.class, int.class, int.class, int.class);
    Method inputs = gen.getDeclaredMethod("inputs", List.class);
    events.setAccessible(true);
    inputs.setAccessible(true);
    Class<?> validationClass = Class.forName("io.otl.core.session.SessionInputValidation");
    Constructor<?> vc = validationClass.getDeclaredConstructor(int.class);
    vc.setAccessible(true);
    Object validation = vc.newInstance(65536);
    Method problem = validationClass.getDeclaredMethod("problem", SessionInput.class);
    problem.setAccessible(true);

    List<List<SessionInput>> all = new ArrayList<>();
    for (int s = 0; s < sessions; s++) {
      @SuppressWarnings("unchecked")
      List<ObjectNode> raw = (List<ObjectNode>) events.invoke(null, "hp-" + s, 0, 20, 20);
      @SuppressWarnings("unchecked")
      List<SessionInput> in = (List<SessionInput>) inputs.invoke(null, raw);
      all.add(in);
    }
    ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
    double[] best = {Double.MAX_VALUE, Double.MAX_VALUE, Double.MAX_VALUE, Double.MAX_VALUE};
    for (int round = 0; round < rounds; round++) {
      long[] ns = new long[4];
      long count = 0;
      for (int s = 0; s < sessions; s++) {
        List<SessionInput> in = all.get(s);
        long t0 = cpu.getCurrentThreadCpuTime();
        for (SessionInput i : in) {
          if (problem.invoke(validation, i) != null) throw new IllegalStateException("invalid " + i);
          if (Ids.problem("agentId", "bench-agent", Ids.MAX_AGENT_ID) != null) throw new IllegalStateException();
        }
        long t1 = cpu.getCurrentThreadCpuTime();
        Instant now = Instant.now();
        List<AgentSession.Event> evs = new ArrayList<>();
        evs.add(new AgentSession.SessionStarted("start:e0", now, now, "bench-agent", null, null, Map.of()));
        for (SessionInput i : in) evs.add(toEvent(i, d, now));
        AgentSession.State state = AgentSession.State.empty();
        for (int twice = 0; twice < 2; twice++) {
          state = AgentSession.State.empty();
          for (AgentSession.Event e : evs) state = state.apply(e);
        }
        long t2 = cpu.getCurrentThreadCpuTime();
        List<byte[]> rows = new ArrayList<>(evs.size());
        for (AgentSession.Event e : evs) rows.add(codec.toBinary(e));
        long t3 = cpu.getCurrentThreadCpuTime();
        for (int k = 0; k < rows.size(); k++) codec.fromBinary(rows.get(k), codec.manifest(evs.get(k)));
        long t4 = cpu.getCurrentThreadCpuTime();
        ns[0] += t1 - t0;
        ns[1] += t2 - t1;
        ns[2] += t3 - t2;
        ns[3] += t4 - t3;
        count += evs.size();
        if (state.eventIds().size() != evs.size()) throw new IllegalStateException("ids");
      }
      System.out.printf("round %d: µs CPU per event: validation %.2f, desensitize+state %.2f, write %.2f, read %.2f;"
          + " total %.2f%n", round, ns[0] / 1e3 / count, ns[1] / 1e3 / count, ns[2] / 1e3 / count,
          ns[3] / 1e3 / count, (ns[0] + ns[1] + ns[2] + ns[3]) / 1e3 / count);
      // Contention only adds CPU time (caches, frequency): the least of the rounds is the closest figure.
      if (round >= rounds / 4) for (int k = 0; k < 4; k++) best[k] = Math.min(best[k], ns[k] / 1e3 / count);
    }
    System.out.printf("best of rounds %d-%d: validation %.2f, desensitize+state %.2f, write %.2f, read %.2f µs"
        + " CPU per event%n", rounds / 4, rounds - 1, best[0], best[1], best[2], best[3]);
  }

  private static AgentSession.Event toEvent(SessionInput input, Desensitizer d, Instant now) {
    Instant at = now.minusMillis(1234);
    if (input instanceof SessionInput.Message m) {
      return new AgentSession.MessageRecorded(m.eventId(), at, now, SessionModel.Role.parse(m.role()),
          d.apply(m.content()), d.applyToId(m.msgId()), m.latencyMs());
    } else if (input instanceof SessionInput.ToolCall t) {
      JsonNode in = d.apply(t.input());
      return new AgentSession.ToolCallRecorded(t.eventId(), at, now, d.applyToId(t.callId()), d.apply(t.toolName()),
          in, d.apply(t.output()), true, t.latencyMs());
    } else if (input instanceof SessionInput.Reasoning r) {
      return new AgentSession.ReasoningStepRecorded(r.eventId(), at, now, r.index(), d.apply(r.thought()),
          d.apply(r.action()), d.apply(r.observation()));
    } else if (input instanceof SessionInput.Result r) {
      return new AgentSession.TaskResultRecorded(r.eventId(), at, now, SessionModel.TaskStatus.parse(r.status()),
          d.apply(r.detail()));
    }
    throw new IllegalArgumentException(input.type());
  }
}
