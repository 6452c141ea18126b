package io.otl.node.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigOriginFactory;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads an AgentScope configuration file, as users already write it, into a Typesafe
 * {@link Config} whose paths are the HOCON names of design §8 ({@code agentscope.training...},
 * kebab-case).
 *
 * <ul>
 *   <li>{@code .conf}: HOCON, taken as is; HOCON substitutions ({@code ${VAR}}, {@code ${?VAR}})
 *       are resolved from the environment map.
 *   <li>{@code .yml}/{@code .yaml}: root {@code agentscope.training}, kebab-case keys.
 *   <li>{@code .json}: root {@code agentscope}, camelCase keys ({@code dataCollector.collectMode}).
 *   <li>{@code .toml}: tables at the top ({@code [training]}, {@code [model]}) are sections of
 *       {@code agentscope}; snake_case keys.
 * </ul>
 *
 * For YAML, JSON and TOML every key is normalised to kebab-case (camelCase and snake_case alike);
 * values, including list elements, are kept exactly as written. When the file has an
 * {@code agentscope} root, other top-level sections (e.g. {@code spring}) belong to other tools
 * and are ignored; without it, the top level is the {@code agentscope} section. Null values are
 * dropped, so the default applies. In every format {@code ${VAR}} and {@code ${VAR:-default}} in
 * string values are resolved from the environment (see {@link EnvPlaceholders}).
 *
 * <p>Problems are reported together in one {@link ConfigValidationException}; no message contains
 * a configuration value.
 */
public final class AgentScopeConfigLoader {

  private static final Logger log = LoggerFactory.getLogger(AgentScopeConfigLoader.class);

  private static final String ROOT = "agentscope";

  private AgentScopeConfigLoader() {}

  /** Loads {@code file}, resolving placeholders from {@link System#getenv()}. */
  public static Config load(Path file) {
    return load(file, System.getenv());
  }

  /** Loads {@code file}, resolving placeholders from {@code env}. */
  public static Config load(Path file, Map<String, String> env) {
    Objects.requireNonNull(file, "file");
    Objects.requireNonNull(env, "env");
    String name = file.getFileName() == null ? "" : file.getFileName().toString();
    String extension = name.lastIndexOf('.') < 0 ? ""
        : name.substring(name.lastIndexOf('.') + 1).toLowerCase(Locale.ROOT);
    if (!Files.isRegularFile(file)) {
      throw new ConfigValidationException(List.of("configuration file " + file
          + " does not exist or is not a file"));
    }
    Config raw;
    switch (extension) {
      case "conf":
        raw = loadHocon(file, env);
        break;
      case "yml":
      case "yaml":
        raw = loadTree(file, "YAML", YAMLMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build());
        break;
      case "json":
        raw = loadTree(file, "JSON", JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(JsonReadFeature.ALLOW_JAVA_COMMENTS, JsonReadFeature.ALLOW_TRAILING_COMMA)
            .build());
        break;
      case "toml":
        raw = loadTree(file, "TOML", TomlMapper.builder().build());
        break;
      default:
        throw new ConfigValidationException(List.of("configuration file " + file
            + ": unsupported type \"." + extension + "\" (use .conf, .yml, .yaml, .json or .toml)"));
    }
    List<String> errors = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    Config resolved = EnvPlaceholders.substitute(raw, env, errors, warnings);
    warnings.forEach(w -> log.warn("{}: {}", file, w));
    if (!errors.isEmpty()) {
      throw new ConfigValidationException(errors);
    }
    return resolved;
  }

  private static Config loadHocon(Path file, Map<String, String> env) {
    try {
      Config parsed = ConfigFactory.parseFile(file.toFile(),
          ConfigParseOptions.defaults().setAllowMissing(false));
      return parsed.resolve(ConfigResolveOptions.defaults().setUseSystemEnvironment(false)
          .appendResolver(EnvPlaceholders.resolver(env)));
    } catch (ConfigException e) {
      throw new ConfigValidationException(List.of(e.getMessage()));
    }
  }

  private static Config loadTree(Path file, String format, ObjectMapper mapper) {
    JsonNode root;
    try {
      root = mapper.readTree(file.toFile());
    } catch (JsonProcessingException e) {
      throw new ConfigValidationException(List.of(describeParseError(file, format, e)));
    } catch (IOException e) {
      throw new ConfigValidationException(List.of("cannot read " + file + ": "
          + e.getClass().getSimpleName()));
    }
    if (root == null || root.isMissingNode() || root.isNull()) {
      return ConfigFactory.empty(file + " (empty)");
    }
    if (!root.isObject()) {
      throw new ConfigValidationException(List.of(file + ": the top level must be a mapping of"
          + " sections, not a " + root.getNodeType().toString().toLowerCase(Locale.ROOT)));
    }
    List<String> errors = new ArrayList<>();
    String origin = file + " (" + format + ")";
    // The paths as written start at the agentscope root; a file without one is that section.
    boolean hasRoot = false;
    for (Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
      hasRoot |= kebabCase(names.next()).equals(ROOT);
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> top = (Map<String, Object>) convert(root, "",
        hasRoot ? List.of() : List.of(ROOT), origin, errors);
    Object section = top;
    if (top.containsKey(ROOT)) {
      section = top.get(ROOT);
      List<String> ignored = new ArrayList<>(top.keySet());
      ignored.remove(ROOT);
      if (!ignored.isEmpty()) {
        log.info("{}: top-level sections {} are not AgentScope's and are ignored", file, ignored);
      }
      if (!(section instanceof Map) && !(section instanceof com.typesafe.config.ConfigObject)) {
        errors.add(ROOT + ": must be a section (mapping), not a single value");
      }
    }
    if (!errors.isEmpty()) {
      throw new ConfigValidationException(errors);
    }
    return ConfigValueFactory.fromMap(Map.of(ROOT, section), origin).toConfig();
  }

  /** What an origin's description adds before the path of a key as its file wrote it. */
  private static final String WRITTEN = ", written as ";

  /**
   * The full path of the key {@code full} as its file wrote it ({@code
   * agentscope.training.dataCollector.collectMod} for {@code agentscope.training.data-collector.collect-mod}),
   * when it was written otherwise; read from the origin {@link #loadTree} gives such a key's value. Unknown
   * keys are reported by this name: the kebab-case one is not in the user's file (trial t52).
   */
  static Optional<String> writtenAs(String full, ConfigValue value) {
    String description = value == null || value.origin() == null ? null : value.origin().description();
    int at = description == null ? -1 : description.lastIndexOf(WRITTEN);
    if (at < 0) return Optional.empty();
    String written = description.substring(at + WRITTEN.length());
    try {
      List<String> writtenPath = ConfigUtil.splitPath(written);
      List<String> fullPath = ConfigUtil.splitPath(full);
      if (writtenPath.size() != fullPath.size()) return Optional.empty(); // a merged value's origin
      for (int i = 0; i < fullPath.size(); i++) {
        if (!kebabCase(writtenPath.get(i)).equals(fullPath.get(i))) return Optional.empty();
      }
    } catch (ConfigException e) {
      return Optional.empty();
    }
    return Optional.of(written);
  }

  /**
   * Converts a Jackson tree into maps, lists and scalars, normalising keys to kebab-case. A value
   * whose path was written otherwise ({@code collectMode}, {@code min_samples}) gets an origin that
   * keeps the path as written, for {@link #writtenAs}.
   */
  private static Object convert(JsonNode node, String path, List<String> written, String origin,
      List<String> errors) {
    if (node.isObject()) {
      Map<String, Object> map = new LinkedHashMap<>();
      Map<String, String> rawNames = new LinkedHashMap<>();
      Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> field = fields.next();
        String key = kebabCase(field.getKey());
        String childPath = path.isEmpty() ? key : path + "." + key;
        String previous = rawNames.putIfAbsent(key, field.getKey());
        if (previous != null) {
          errors.add(childPath + ": given twice, as \"" + previous + "\" and \""
              + field.getKey() + "\"");
          continue;
        }
        if (!field.getValue().isNull()) {
          List<String> childWritten = new ArrayList<>(written);
          childWritten.add(field.getKey());
          Object child = convert(field.getValue(), childPath, childWritten, origin, errors);
          if (!field.getKey().equals(key) || written.stream().anyMatch(k -> !kebabCase(k).equals(k))) {
            child = ConfigValueFactory.fromAnyRef(child, origin).withOrigin(ConfigOriginFactory.newSimple(
                origin + WRITTEN + ConfigUtil.joinPath(childWritten)));
          }
          map.put(key, child);
        }
      }
      return map;
    }
    if (node.isArray()) {
      List<Object> list = new ArrayList<>(node.size());
      for (int i = 0; i < node.size(); i++) {
        JsonNode element = node.get(i);
        list.add(element.isNull() ? null : convert(element, path + "[" + i + "]", written, origin, errors));
      }
      return list;
    }
    if (node.isBoolean()) {
      return node.booleanValue();
    }
    if (node.isNumber()) {
      if (node.isIntegralNumber()) {
        if (node.canConvertToInt()) {
          return node.intValue();
        }
        if (node.canConvertToLong()) {
          return node.longValue();
        }
      }
      return node.doubleValue(); // TOML floats arrive as BigDecimal: 2e-5 -> 2.0E-5
    }
    return node.asText();
  }

  /**
   * {@code collectMode} → {@code collect-mode}, {@code collect_mode} → {@code collect-mode},
   * {@code baseURL} → {@code base-url}; kebab-case keys are unchanged.
   */
  static String kebabCase(String key) {
    StringBuilder sb = new StringBuilder(key.length() + 4);
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c == '_') {
        sb.append('-');
      } else if (Character.isUpperCase(c)) {
        char prev = i > 0 ? key.charAt(i - 1) : 0;
        boolean afterWord = Character.isLowerCase(prev) || Character.isDigit(prev);
        boolean endOfAcronym = Character.isUpperCase(prev) && i + 1 < key.length()
            && Character.isLowerCase(key.charAt(i + 1));
        if ((afterWord || endOfAcronym) && sb.length() > 0 && sb.charAt(sb.length() - 1) != '-') {
          sb.append('-');
        }
        sb.append(Character.toLowerCase(c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  /**
   * Where the file is malformed and what the parser said, without echoing the file's text (it may
   * hold secrets): only the first line of the parser's message, with quoted fragments elided.
   */
  private static String describeParseError(Path file, String format, JsonProcessingException e) {
    JsonLocation location = e.getLocation();
    String where = location == null || location.getLineNr() < 0 ? ""
        : " at line " + location.getLineNr() + ", column " + location.getColumnNr();
    String problem = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
    // SnakeYAML says the context, then the problem, each flush left; the indented lines quote the file.
    problem = String.join("; ", problem.lines().filter(l -> !l.isBlank() && !Character.isWhitespace(l.charAt(0)))
            .toList())
        // Jackson's note of where an object began names its source, which is disabled (trial t175)
        .replaceAll("\\[Source: [^\\]]*; line: (\\d+), column: (\\d+)\\]", "line $1, column $2")
        .replaceAll("'[^']{2,}'", "'…'").replaceAll("\"[^\"]{2,}\"", "\"…\"");
    return file + ": not valid " + format + where + (problem.isBlank() ? "" : ": " + problem);
  }
}
