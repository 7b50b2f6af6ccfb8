// The config file as text to its validated form: reading it, parsing the YAML, substituting
// ${VAR} from the environment, checking it against schema.ts, and adding the demo catalogue when
// the file asks for it (or defines no providers).
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { DEMO_PROVIDER, demoModels, demoProvider } from "./demo-catalog.js";
import { ConfigError, formatPath, issuesOf } from "./gateway-config.js";
import { configFileSchema, type ConfigFile } from "./schema.js";

/**
 * The file with the demo provider and models added when it asks for them (`demo: true`) or, by
 * default, when it defines no providers: a first start without a config can answer and bill.
 */
export function withDemoCatalog(file: ConfigFile, source: string): ConfigFile {
  if (!(file.demo ?? Object.keys(file.providers).length === 0)) return file;
  if (DEMO_PROVIDER in file.providers)
    throw new ConfigError(`${source}: providers.${DEMO_PROVIDER}: the name is taken by the demo provider (demo: true); rename it or set demo: false`);
  for (const [i, m] of file.models.entries()) {
    if (demoModels.some((d) => d.id === m.id)) throw new ConfigError(`${source}: models[${i}].id: "${m.id}" is a demo model's id (demo: true); rename it or set demo: false`);
  }
  return { ...file, providers: { ...file.providers, [DEMO_PROVIDER]: demoProvider }, models: [...file.models, ...demoModels] };
}

export function readConfigFile(path: string, env: NodeJS.ProcessEnv): ConfigFile {
  return parseConfigText(readConfigText(path), path, env);
}

export function readConfigText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`${path}: cannot be read: ${(error as Error).message.split("\n")[0]}`);
  }
}

export function parseConfigText(text: string, path: string, env: NodeJS.ProcessEnv): ConfigFile {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new ConfigError(`${path}: not valid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  const substituted = substituteEnv(raw ?? {}, env, path, []);
  const parsed = configFileSchema.safeParse(substituted);
  if (!parsed.success) throw ConfigError.of(path, issuesOf(parsed.error.issues));
  return parsed.data;
}

// ${VAR} in any string value; a missing variable is a start-up error naming the field.
function substituteEnv(value: unknown, env: NodeJS.ProcessEnv, file: string, path: PropertyKey[]): unknown {
  if (typeof value === "string") {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const found = env[name];
      if (found === undefined) throw new ConfigError(`${file}: ${formatPath(path)}: environment variable ${name} is not set`);
      return found;
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => substituteEnv(item, env, file, [...path, i]));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteEnv(v, env, file, [...path, k])]));
  }
  return value;
}
