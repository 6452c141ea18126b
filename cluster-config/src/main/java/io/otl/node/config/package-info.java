/**
 * Node configuration (design §8).
 *
 * <p>{@link io.otl.node.config.AgentScopeConfigLoader} reads the file given with
 * {@code --config} ({@code .conf}, {@code .yml}/{@code .yaml}, {@code .json}, {@code .toml}) into
 * HOCON names under {@code agentscope.training}; {@link io.otl.node.config.NodeConfig} layers
 * system properties, {@code OTL_*} environment overrides, that file, {@code application.conf} and
 * the defaults in the modules' {@code reference.conf}; {@link io.otl.node.config.TrainingSettingsValidator}
 * checks the result, listing every wrong value at once and every unknown key by name.
 *
 * <p>Choices made where design §8 is silent:
 * <ul>
 *   <li>{@code ${VAR}} / {@code ${VAR:-default}} are resolved in string values of every format
 *       (also quoted HOCON strings); {@code :-} also replaces an empty variable; substituted text
 *       is not scanned again. Outside {@code agentscope.training} under {@code agentscope} (e.g.
 *       {@code agentscope.model}) an unset variable only warns and stays as written.
 *   <li>Values that parse are accepted as strings too ({@code "0.5"}, {@code "on"}), as Typesafe
 *       Config's getters do, so {@code -D} overrides work; integers must be whole numbers.
 *   <li>{@code model-update.steps} are the ratios after the canary stage ({@code canary-ratio}),
 *       so steps the user sets must start above it; the default steps follow any canary ratio (those
 *       at or below it are left out: {@code canary-ratio = 0.2} rolls out 20 %, 50 %, 100 %).
 *   <li>Values of keys whose name contains password, secret, token or api key are printed as
 *       {@code ****}. Typesafe's own {@code Config.toString()} still prints values: never log a
 *       whole {@code Config}.
 * </ul>
 */
package io.otl.node.config;
