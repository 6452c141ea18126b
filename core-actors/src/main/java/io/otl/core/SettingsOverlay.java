package io.otl.core;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * An agent's run-time overrides laid over its file settings: the one mechanism behind its training
 * policy ({@link io.otl.core.coordinator.PolicyOverrides}) and its rollout settings ({@link
 * io.otl.core.model.RolloutPolicy}). A {@code PUT /v1/training/{agentId}/policy} body is made flat
 * and checked key by key ({@link #flatten}), laid over the agent's {@code agentscope.training}
 * section, checked by the node's start-up validator and read as the file would be ({@link #over}),
 * so a run-time change is refused exactly where the file would refuse to start. The kinds differ
 * only in their keys, their messages, where their keys go and what they read.
 */
public final class SettingsOverlay {

  private SettingsOverlay() {}

  /** Makes an agent's settings from its overrides; throws IllegalArgumentException naming the key. */
  @FunctionalInterface
  public interface Resolver<T> {
    T resolve(Map<String, Object> overrides);
  }

  /**
   * The settings {@code overrides} make over the file's, or the file's alone when the file refuses
   * them now (it changed since they were accepted); {@code refused} hears why, to say so. What the
   * entities train and roll out with, and what the audit shows they used.
   */
  public static <T> T inForce(Resolver<T> resolver, Map<String, Object> overrides,
      Consumer<IllegalArgumentException> refused) {
    try {
      return resolver.resolve(overrides);
    } catch (IllegalArgumentException e) {
      refused.accept(e);
      return resolver.resolve(Map.of());
    }
  }

  /**
   * The run-time overrides as the entity reads them, for its policy view: each key with its value in force
   * ({@code inForce}, typed: {@code "5"} is 5, {@code "yes"} true, {@code "1800s"} {@code 30m}), so the
   * answer to a PUT shows what the node will use, not the text sent (trial t101). As stored when
   * {@code applied} is false (a later file refused them: the file's settings are in force, and the view
   * must not show those as overrides) or for a key the view does not show.
   */
  public static Map<String, Object> asRead(Map<String, Object> overrides, Map<String, Object> inForce,
      boolean applied) {
    if (!applied) return overrides;
    Map<String, Object> read = new LinkedHashMap<>();
    overrides.forEach((key, value) -> read.put(key, inForce.getOrDefault(key, value)));
    return read;
  }

  /**
   * Run-time changes refused, {@code why} saying so: the settings were built without the
   * configuration to lay overrides over. No overrides give {@code settings}.
   */
  public static <T> Resolver<T> fixed(T settings, String why) {
    return o -> {
      if (o.isEmpty()) return settings;
      throw new IllegalArgumentException(why);
    };
  }

  /**
   * The keys a kind of overrides accepts, and what it says of the rest. A key is client text: a
   * message names it only as {@link Ids#shownPath} shows it, followed by {@code notAllowed} or
   * {@code noValue}.
   *
   * @param allowed a flat key that may be set
   * @param notAllowed after the key, for one that may not
   * @param notAKeyName for a body whose keys are not key names ({@code trigger..type})
   * @param notAnObject for a body that is no object of keys and values
   * @param noValue after the key, for a null value
   */
  public record Keys(Predicate<String> allowed, String notAllowed, String notAKeyName, String notAnObject,
      String noValue) {}

  /**
   * Flat {@code key -> value} of a JSON-like object, nested sections accepted ({@code {"trigger":
   * {"min-samples": 5}}} is {@code trigger.min-samples}); every key must be allowed, no value null.
   */
  public static Map<String, Object> flatten(Map<String, ?> raw, Keys keys) {
    Map<String, Object> body = paths(raw == null ? Map.of() : raw, keys);
    Config c;
    try {
      c = ConfigFactory.parseMap(body);
    } catch (ConfigException.BadPath e) {
      // Config's message quotes the key it stumbled on: client data, not echoed.
      throw new IllegalArgumentException(keys.notAKeyName(), e);
    } catch (ConfigException e) {
      throw new IllegalArgumentException(keys.notAnObject(), e);
    }
    Map<String, Object> flat = new LinkedHashMap<>();
    for (Map.Entry<String, ConfigValue> e : c.entrySet()) {
      if (!keys.allowed().test(e.getKey())) {
        throw new IllegalArgumentException(Ids.shownPath(e.getKey()) + keys.notAllowed());
      }
      flat.put(e.getKey(), e.getValue().unwrapped());
    }
    // entrySet() leaves out null values: name them instead of dropping them silently.
    for (Map.Entry<String, ?> e : body.entrySet()) {
      if (e.getValue() == null) throw new IllegalArgumentException(Ids.shownPath(e.getKey()) + keys.noValue());
    }
    return flat;
  }

  /**
   * The body with its nested sections written flat ({@code {"hyperparams": {"epochs": 2}}} becomes
   * {@code "hyperparams.epochs": 2}), so a body may mix the two forms: Config's parseMap refuses a map
   * holding both {@code hyperparams.learning-rate} and {@code hyperparams}, which was a 400 "not an
   * object of keys and values" for a body that means one thing. A key given both ways must have the
   * same value (numbers compared as numbers: 2 and 2.0 agree); a key that is a value and also a
   * section ({@code "trigger": 5} beside {@code "trigger.type"}) means nothing. Both are refused by name.
   */
  private static Map<String, Object> paths(Map<String, ?> body, Keys keys) {
    Map<String, Object> out = new LinkedHashMap<>();
    addPaths("", body, out, keys);
    for (String key : out.keySet()) {
      for (String other : out.keySet()) {
        if (other.startsWith(key + ".")) {
          throw new IllegalArgumentException(Ids.shownPath(key) + " is given as a value and as a section ("
              + Ids.shownPath(other) + "); give one");
        }
      }
    }
    return out;
  }

  private static void addPaths(String prefix, Map<?, ?> section, Map<String, Object> out, Keys keys) {
    for (Map.Entry<?, ?> e : section.entrySet()) {
      String key = prefix + e.getKey();
      if (e.getValue() instanceof Map<?, ?> nested) {
        // An empty section sets nothing, as Config reads it; but {} where a key takes a value
        // ("trigger.min-samples": {}, a serializer's empty object) was a 200 that dropped the key.
        if (nested.isEmpty() && keys.allowed().test(key)) {
          throw new IllegalArgumentException(Ids.shownPath(key)
              + ": must be a value, not an object ({} sets nothing; leave the key out to keep the file's value)");
        }
        addPaths(key + ".", nested, out, keys);
        continue;
      }
      if (out.containsKey(key) && !sameValue(out.get(key), e.getValue())) {
        throw new IllegalArgumentException(Ids.shownPath(key)
            + " is given twice, flat and nested, with different values; give it once");
      }
      out.put(key, e.getValue());
    }
  }

  private static boolean sameValue(Object a, Object b) {
    if (a instanceof Number x && b instanceof Number y) {
      return new java.math.BigDecimal(x.toString()).compareTo(new java.math.BigDecimal(y.toString())) == 0;
    }
    return java.util.Objects.equals(a, b);
  }

  /**
   * A resolver laying overrides over the agent's {@code agentscope.training} section (already
   * holding its file's per-agent settings): {@code flatten} checks them, {@code validate} (the
   * node's start-up validator; null for none; may throw IllegalArgumentException) checks the whole,
   * {@code read} reads it, with its own checks across keys last. No overrides: the file's settings,
   * nothing to validate.
   *
   * @param section where the flat keys go, relative to {@code agentscopeTraining}; empty: they are
   *     relative to it already
   */
  public static <T> Resolver<T> over(Config agentscopeTraining, String section,
      Function<Map<String, ?>, Map<String, Object>> flatten, Consumer<Config> validate, Function<Config, T> read) {
    return overrides -> {
      Map<String, Object> flat = flatten.apply(overrides);
      if (flat.isEmpty()) return read.apply(agentscopeTraining);
      Config laid = ConfigFactory.parseMap(flat);
      Config effective = (section.isEmpty() ? laid : laid.atPath(section)).withFallback(agentscopeTraining);
      if (validate != null) validate.accept(effective);
      return read.apply(effective);
    };
  }
}
