import { z } from 'zod';
import { UserFacingError } from './errors/user-facing-error.js';
import { EMAIL_ADDRESS } from './web/email-address.js';

// The only reader of process.env. Everything is checked once at boot; a bad value stops the start
// with one line naming the variable.

const booleanish = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

const envSchema = z.object({
  PORT: z.coerce.number({ error: 'must be a port number (0-65535)' }).int('must be a port number (0-65535)').min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_PATH: z.string().min(1).default('data/simarena.db'),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  TRUST_PROXY: booleanish.default(false),
  SESSION_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  OPENAI_BASE_URL: z.url({ protocol: /^https?$/ }).default('https://api.openai.com/v1'),
  OPENAI_API_KEY: z.string().optional(),
  ENDPOINTS_FILE: z.string().min(1).default('simarena.endpoints.json'),
  ADMIN_EMAIL: z.string().max(254).regex(EMAIL_ADDRESS, 'must be an email address').optional(),
  ADMIN_PASSWORD: z.string().min(12, 'must be at least 12 characters (it is an admin password)').max(200).optional(),
  /** Must exceed the idle timeout of the reverse proxy in front (nginx keepalive_timeout, an AWS ALB's 60 s). */
  KEEP_ALIVE_TIMEOUT_SECONDS: z.coerce
    .number({ error: 'must be a whole number of seconds from 1 to 3600' })
    .int('must be a whole number of seconds from 1 to 3600')
    .min(1, 'must be a whole number of seconds from 1 to 3600')
    .max(3600, 'must be a whole number of seconds from 1 to 3600')
    .default(75),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SEED_DEMO: booleanish.default(true),
  GENERATION_RUNS_PER_ENDPOINT: z.coerce
    .number({ error: 'must be a whole number from 1 to 32' })
    .int('must be a whole number from 1 to 32')
    .min(1, 'must be a whole number from 1 to 32')
    .max(32, 'must be a whole number from 1 to 32')
    .default(1),
  /** Pay per hour (in a batch's own currency) below which the launch checklist warns; 0 turns the warning off. */
  MIN_PAY_PER_HOUR: z.coerce.number({ error: 'must be an amount per hour, e.g. 6 or 7.50' }).min(0, 'must be an amount per hour, e.g. 6 or 7.50').max(10_000).default(6),
  /** How often the server brings published batches' platforms in step with them (pause, stop, expire). */
  PLATFORM_FOLLOW_SECONDS: z.coerce
    .number({ error: 'must be a whole number of seconds from 1 to 60' })
    .int('must be a whole number of seconds from 1 to 60')
    .min(1, 'must be a whole number of seconds from 1 to 60')
    .max(60, 'must be a whole number of seconds from 1 to 60')
    .default(15),
  /** Prolific's API token (issue 41): read here, never stored, logged or echoed. */
  PROLIFIC_API_TOKEN: z.string().trim().min(1).optional(),
  /** The Prolific workspace simarena's studies are paid from (its currency is checked before a study is created). */
  PROLIFIC_WORKSPACE_ID: z.string().trim().min(1).max(64).optional(),
  /** The workspace secret Prolific signs its webhooks with (Create/replace a secret): read here, never stored or echoed. */
  PROLIFIC_WEBHOOK_SECRET: z.string().trim().min(8).optional(),
  /** Prolific's API base URL; overridden for tests and proxies. */
  PROLIFIC_API_URL: z.url({ protocol: /^https?$/ }).default('https://api.prolific.com/api/v1/'),
  /** MTurk's requester endpoint; overridden for tests and proxies (`--sandbox` picks the sandbox's). */
  MTURK_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  /** The standard AWS credentials, for MTurk (issue 41): read here, never stored, logged or echoed. */
  AWS_ACCESS_KEY_ID: z.string().trim().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().trim().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().trim().min(1).optional(),
});

export type Config = {
  port: number;
  host: string;
  databasePath: string;
  publicUrl: string;
  /** True when PUBLIC_URL is https: cookies are then marked Secure. */
  secureCookies: boolean;
  trustProxy: boolean;
  sessionSecret: string | undefined;
  openaiBaseUrl: string;
  openaiApiKey: string | undefined;
  endpointsFile: string;
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  /** server.keepAliveTimeout (ms): above the proxy's idle timeout, so the proxy never reuses a socket the server is closing. */
  keepAliveTimeoutMs: number;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  seedDemo: boolean;
  /** Generation runs the server runs at once on one model endpoint (console runs; rate limits are per endpoint). */
  generationRunsPerEndpoint: number;
  /** The launch checklist's pay-per-hour floor (MIN_PAY_PER_HOUR), or null when turned off. */
  minPayPerHour: number | null;
  /** Seconds between two checks that bring published batches' platforms in step with them (PLATFORM_FOLLOW_SECONDS). */
  platformFollowSeconds: number;
  /** Prolific's API base URL (PROLIFIC_API_URL), ending in a slash. */
  prolificApiUrl: string;
  /** PROLIFIC_WORKSPACE_ID, or null: then the token's only workspace (several must agree on their currency). */
  prolificWorkspaceId: string | null;
  /**
   * Prolific's API token (PROLIFIC_API_TOKEN), or undefined. A function, so that the token never appears when the
   * config is printed or serialised.
   */
  prolificToken: () => string | undefined;
  /** The secret Prolific signs webhooks with (PROLIFIC_WEBHOOK_SECRET), or undefined; a function like prolificToken. */
  prolificWebhookSecret: () => string | undefined;
  /** MTURK_ENDPOINT, or null for MTurk's production (or, with `--sandbox`, sandbox) endpoint. */
  mturkEndpoint: string | null;
  /** The AWS credentials MTurk is called with, or undefined; a function for the same reason as prolificToken. */
  awsCredentials: () => AwsCredentials | undefined;
  /** The environment the config was read from: named endpoints take their key from a variable they name (never stored). */
  env: Readonly<Record<string, string | undefined>>;
};

/** A setting the operator must fix: printed as one line at start (server and CLI), never with a stack trace. */
export type AwsCredentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

export class ConfigError extends UserFacingError {
  constructor(message: string) {
    super(message, 500, 'config');
  }
}

const SECRET_VARIABLES = new Set(['ADMIN_PASSWORD', 'SESSION_SECRET', 'OPENAI_API_KEY', 'PROLIFIC_API_TOKEN', 'PROLIFIC_WEBHOOK_SECRET', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']);

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings count as unset, as they do in most shells' `VAR= cmd`.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? 'environment');
    // Secrets are never echoed: the message may end up in a log.
    const value = SECRET_VARIABLES.has(name) ? undefined : present[name];
    throw new ConfigError(`Invalid environment variable ${name}${value === undefined ? '' : `=${JSON.stringify(value)}`}: ${issue?.message ?? 'invalid'}`);
  }
  const e = parsed.data;
  const publicUrl = (e.PUBLIC_URL ?? `http://${e.HOST.includes(':') ? `[${e.HOST}]` : e.HOST}:${e.PORT}`).replace(/\/+$/, '');
  return {
    port: e.PORT,
    host: e.HOST,
    databasePath: e.DATABASE_PATH,
    publicUrl,
    secureCookies: publicUrl.startsWith('https:'),
    trustProxy: e.TRUST_PROXY,
    sessionSecret: e.SESSION_SECRET,
    openaiBaseUrl: e.OPENAI_BASE_URL,
    openaiApiKey: e.OPENAI_API_KEY,
    endpointsFile: e.ENDPOINTS_FILE,
    adminEmail: e.ADMIN_EMAIL,
    adminPassword: e.ADMIN_PASSWORD,
    keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
    logLevel: e.LOG_LEVEL,
    seedDemo: e.SEED_DEMO,
    generationRunsPerEndpoint: e.GENERATION_RUNS_PER_ENDPOINT,
    minPayPerHour: e.MIN_PAY_PER_HOUR > 0 ? e.MIN_PAY_PER_HOUR : null,
    prolificApiUrl: e.PROLIFIC_API_URL.endsWith('/') ? e.PROLIFIC_API_URL : `${e.PROLIFIC_API_URL}/`,
    platformFollowSeconds: e.PLATFORM_FOLLOW_SECONDS,
    prolificWorkspaceId: e.PROLIFIC_WORKSPACE_ID ?? null,
    prolificToken: () => e.PROLIFIC_API_TOKEN,
    prolificWebhookSecret: () => e.PROLIFIC_WEBHOOK_SECRET,
    mturkEndpoint: e.MTURK_ENDPOINT ?? null,
    awsCredentials: () =>
      e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY
        ? { accessKeyId: e.AWS_ACCESS_KEY_ID, secretAccessKey: e.AWS_SECRET_ACCESS_KEY, ...(e.AWS_SESSION_TOKEN ? { sessionToken: e.AWS_SESSION_TOKEN } : {}) }
        : undefined,
    env: Object.freeze({ ...env }),
  };
}
