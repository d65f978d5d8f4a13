import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Config } from '../config.js';
import { jsonSyntaxMessage } from '../web/json-syntax.js';
import { GenerationInputError } from './generation-error.js';

// Named OpenAI-compatible endpoints, so that one study can compare models served in different places.
// The file names the environment variable holding each key; keys are read at run time and never stored.

const priceSchema = z.strictObject({
  promptPerMTok: z.number().min(0),
  completionPerMTok: z.number().min(0),
});
export type Price = z.infer<typeof priceSchema>;

const endpointSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'must be letters, digits, ".", "_" or "-"'),
  baseUrl: z.url({ protocol: /^https?$/ }),
  apiKeyEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an environment variable name').optional(),
  prices: z.record(z.string(), priceSchema).default({}),
});
const fileSchema = z.union([z.array(endpointSchema), z.strictObject({ endpoints: z.array(endpointSchema) })]);

export type EndpointSpec = z.infer<typeof endpointSchema>;
export const DEFAULT_ENDPOINT = 'default';

/** Reads the endpoints file; a missing file means only the default endpoint. */
export function readEndpointsFile(path: string): EndpointSpec[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new GenerationInputError(`${path}: not valid JSON at ${jsonSyntaxMessage(text, error)}`);
  }
  const parsed = fileSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new GenerationInputError(`${path}: field "${issue?.path.join('.') ?? ''}" ${issue?.message ?? 'is invalid'}`);
  }
  return Array.isArray(parsed.data) ? parsed.data : parsed.data.endpoints;
}

export type ResolvedEndpoint = { name: string; baseUrl: string; apiKeyEnv: string; apiKey: string | undefined; price: Price | null };

/**
 * The endpoint a run uses. "default" is OPENAI_BASE_URL with OPENAI_API_KEY, unless the file declares
 * an endpoint of that name (which may still add prices).
 */
export function resolveEndpoint(
  config: Config,
  env: Record<string, string | undefined>,
  name: string,
  model: string,
): ResolvedEndpoint {
  const declared = readEndpointsFile(config.endpointsFile);
  const spec = declared.find((e) => e.name === name);
  if (!spec && name !== DEFAULT_ENDPOINT) {
    const known = [DEFAULT_ENDPOINT, ...declared.map((e) => e.name)].join(', ');
    throw new GenerationInputError(`unknown endpoint "${name}": declare it in ${config.endpointsFile} (known: ${known})`);
  }
  const baseUrl = spec?.baseUrl ?? config.openaiBaseUrl;
  const apiKeyEnv = spec?.apiKeyEnv ?? 'OPENAI_API_KEY';
  const apiKey = spec?.apiKeyEnv ? env[spec.apiKeyEnv] || undefined : config.openaiApiKey;
  return { name, baseUrl, apiKeyEnv, apiKey, price: spec?.prices[model] ?? null };
}
