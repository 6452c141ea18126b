import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import com.typesafe.config.ConfigFactory;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import io.otl.core.session.SessionSettings;
import io.otl.persistence.schema.PersistedCodec;
import io.otl.persistence.schema.PersistedTypes;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Counts of a session's own per-event work as the node runs it, without the framework (BENCHMARKS.md,
 * session 47): the entity's {@code RecordPlanner} on W1's requests (5 inputs each: validation,
 * desensitizer, the events, the draft state), Pekko's event handler on the stored events (the state
 * once more; since session 47 the draft's states, when the plan hands them over), and the journal
 * codec's manifest and write. Per accepted input: this thread's CPU
 * nanoseconds and allocated bytes, median and least over the measured rounds. Allocation is a count
 * the machine's load does not move; CPU time it moves a little. Not a test; compares builds:
 *
 * <pre>
 *   java -cp benchmarks/target/benchmarks.jar scripts/SessionPathCounts.java [sessions] [warm-up rounds] [rounds]
 * </pre>
 */
public class SessionPathCounts {
  public static void main(String[] args) throws Exception {
    int sessions = args.length > 0 ? Integer.parseInt(args[0]) : 300;
    int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 60;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 30;
    ObjectMapper mapper = JsonMapper.builder().addModule(new JavaTimeModule()).addModule(new Jdk8Module())
        .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();
    PersistedCodec codec = new PersistedCodec(mapper, PersistedTypes.ALL);
    SessionSettings settings = SessionSettings.fromConfig(ConfigFactory.load().getConfig("agentscope.training"));

    Class<?> gen = Class.forName("io.otl.bench.EventGen");
    Method events = gen.getDeclaredMethod("events", String.class, int.class, int.class, int.class);
    Method inputs = gen.getDeclaredMethod("inputs", List.class);
    events.setAccessible(true);
    inputs.setAccessible(true);
    Class<?> plannerClass = Class.forName("io.otl.core.session.RecordPlanner");
    Constructor<?> newPlanner = plannerClass.getDeclaredConstructor(String.class, SessionSettings.class);
    newPlanner.setAccessible(true);
    Method plan = plannerClass.getDeclaredMethod("plan", AgentSession.State.class, String.class, List.class,
        Instant.class);
    plan.setAccessible(true);
    Class<?> storeClass = Class.forName("io.otl.core.session.RecordPlanner$Store");
    Method storedEvents = storeClass.getDeclaredMethod("events");
    storedEvents.setAccessible(true);
    // Since session 47 the plan hands the entity its draft's states, which its event handler takes.
    Method storedStates = null;
    try {
      storedStates = storeClass.getDeclaredMethod("states");
      storedStates.setAccessible(true);
    } catch (NoSuchMethodException before) {
      // a build before session 47: the handler applies every event again
    }

    // W1's requests: 20 inputs a session, 5 a request, prepared before any clock runs.
    List<List<List<SessionInput>>> all = new ArrayList<>();
    for (int s = 0; s < sessions; s++) {
      List<List<SessionInput>> batches = new ArrayList<>();
      for (int from = 0; from < 20; from += 5) {
        @SuppressWarnings("unchecked")
        List<ObjectNode> raw = (List<ObjectNode>) events.invoke(null, "sp-" + s, from, from + 5, 20);
        @SuppressWarnings("unchecked")
        List<SessionInput> in = (List<SessionInput>) inputs.invoke(null, raw);
        batches.add(in);
      }
      all.add(batches);
    }
    var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    String[] stage = {"plan", "apply", "write"};
    long[][] cpu = new long[3][rounds];
    long[][] alloc = new long[3][rounds];
    long perRound = 0;
    long sink = 0;
    for (int round = 0; round < warmup + rounds; round++) {
      long[] ns = new long[3];
      long[] bytes = new long[3];
      long accepted = 0;
      for (int s = 0; s < sessions; s++) {
        Object planner = newPlanner.newInstance("sp-" + s, settings);
        AgentSession.State state = AgentSession.State.empty();
        for (List<SessionInput> batch : all.get(s)) {
          Instant now = Instant.now();
          long c0 = mx.getCurrentThreadCpuTime();
          long a0 = mx.getCurrentThreadAllocatedBytes();
          Object store = plan.invoke(planner, state, "bench-agent", batch, now);
          long c1 = mx.getCurrentThreadCpuTime();
          long a1 = mx.getCurrentThreadAllocatedBytes();
          if (!storeClass.isInstance(store)) throw new IllegalStateException("refused: " + store);
          @SuppressWarnings("unchecked")
          List<AgentSession.Event> evs = (List<AgentSession.Event>) storedEvents.invoke(store);
          @SuppressWarnings("unchecked")
          List<AgentSession.State> states =
              storedStates == null ? List.of() : (List<AgentSession.State>) storedStates.invoke(store);
          if (states.size() == evs.size()) {
            for (AgentSession.State st : states) state = st;
          } else {
            for (AgentSession.Event e : evs) state = state.apply(e);
          }
          long c2 = mx.getCurrentThreadCpuTime();
          long a2 = mx.getCurrentThreadAllocatedBytes();
          for (AgentSession.Event e : evs) sink += codec.manifest(e).length() + codec.toBinary(e).length;
          long c3 = mx.getCurrentThreadCpuTime();
          long a3 = mx.getCurrentThreadAllocatedBytes();
          ns[0] += c1 - c0;
          ns[1] += c2 - c1;
          ns[2] += c3 - c2;
          bytes[0] += a1 - a0;
          bytes[1] += a2 - a1;
          bytes[2] += a3 - a2;
          accepted += batch.size();
        }
        if (state.eventIds().size() != 22) throw new IllegalStateException("events " + state.eventIds().size());
      }
      perRound = accepted;
      if (round >= warmup) {
        for (int k = 0; k < 3; k++) {
          cpu[k][round - warmup] = ns[k];
          alloc[k][round - warmup] = bytes[k];
        }
      }
    }
    System.out.printf("%d sessions x 20 inputs, %d measured rounds after %d (sink %d)%n", sessions, rounds, warmup,
        sink % 10);
    double cpuSum = 0;
    double allocSum = 0;
    for (int k = 0; k < 3; k++) {
      double cMed = median(cpu[k]) / perRound;
      double cMin = Arrays.stream(cpu[k]).min().getAsLong() / (double) perRound;
      double aMed = median(alloc[k]) / perRound;
      cpuSum += cMed;
      allocSum += aMed;
      System.out.printf("%-6s CPU ns/event median %,8.0f (least %,8.0f)   allocated B/event median %,8.0f%n", stage[k],
          cMed, cMin, aMed);
    }
    System.out.printf("total  CPU ns/event median %,8.0f                    allocated B/event median %,8.0f%n", cpuSum,
        allocSum);
  }

  private static double median(long[] v) {
    long[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
  }
}
