package io.otl.node.config;

import static io.otl.node.config.TrainingSettingsValidator.ROOT;

import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import io.otl.core.api.OperatorNames;
import io.otl.node.config.ConfigRules.Rule;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code auth.operators { alice = ${?ALICE_TOKEN} }}: each operator's own bearer token, so the
 * journal records who sent a command as {@code token:<name>}, an identity the node checked
 * (docs/operations.md "Who did it"). A token must name one person: one that is empty, has spaces
 * around it, or equals another operator's, the shared {@code auth.token}, {@code auth.metrics-token}
 * or an agent's gateway key stops start-up. Every message names the keys, never a token.
 */
final class OperatorTokens {
  static final String KEY = "auth.operators";
  private static final String FULL = ROOT + "." + KEY;

  private OperatorTokens() {}

  /** The section, typed as name → token in the file's order (its good entries; the others are errors). */
  static Rule rule() {
    return (c, key, v) -> {
      if (v.valueType() != ConfigValueType.OBJECT) {
        c.errors.add(key + ": must be a section of <operator name> = <token> (e.g. alice = ${?ALICE_TOKEN})");
        return null;
      }
      Map<String, String> tokens = new LinkedHashMap<>();
      Map<String, String> nameOfToken = new LinkedHashMap<>();
      for (Map.Entry<String, ConfigValue> e : ((ConfigObject) v).entrySet()) {
        String name = e.getKey();
        String at = key + "." + name;
        String problem = OperatorNames.problem("the operator name " + at, name);
        String token = ConfigRules.asScalarString(e.getValue());
        if (problem != null) {
          c.errors.add(problem + " (it is recorded as token:<name>)");
        } else if (token == null) {
          c.errors.add(at + ": must be the operator's token, a string");
        } else if (token.isBlank()) {
          c.errors.add(at + ": is empty; give the operator a token of their own, or remove the entry");
        } else if (ConfigRules.padded(token)) {
          // The Authorization header's token is trimmed, so this one could never match.
          c.errors.add(at + ": starts or ends with white space; remove it");
        } else if (nameOfToken.containsKey(token)) {
          c.errors.add(at + ": the same token as " + key + "." + nameOfToken.get(token)
              + "; give each operator their own, or the journal cannot tell them apart");
        } else {
          nameOfToken.put(token, name);
          tokens.put(name, token);
        }
      }
      return tokens; // the good ones, so the cross-checks still run; the errors stop start-up anyway
    };
  }

  /** An operator's token that is also another key's secret would name two holders: refused. */
  static void crossCheck(SettingsCheck c) {
    @SuppressWarnings("unchecked")
    Map<String, String> tokens = (Map<String, String>) c.typed.get(KEY);
    if (tokens == null || tokens.isEmpty()) return;
    Map<String, String> others = new LinkedHashMap<>();
    others.put("auth.token", (String) c.typed.get("auth.token"));
    others.put("auth.metrics-token", (String) c.typed.get("auth.metrics-token"));
    Object agents = c.typed.get("gateway.agents");
    if (agents instanceof Map<?, ?> byAgent) {
      byAgent.forEach((agent, section) -> {
        if (section instanceof Map<?, ?> s && s.get("api-key") instanceof String k) {
          others.put("gateway.agents." + agent + ".api-key", k);
        }
      });
    }
    tokens.forEach((name, token) -> others.forEach((otherKey, other) -> {
      if (token.equals(other)) {
        c.errors.add(FULL + "." + name + ": the same token as " + ROOT + "." + otherKey
            + "; give the operator a token of their own, or the journal cannot tell who sent a command");
      }
    }));
  }
}
