import type { RequestHandler } from 'express';
import helmet from 'helmet';
import { fixedHeaders } from '../web/fixed-headers.js';
import type { ProviderKind } from '../batches/batch.schema.js';
import { MTURK_FRAME_HOSTS, MTURK_SUBMIT_HOSTS, PROLIFIC_COMPLETION_HOST } from './providers.js';

/**
 * Rater pages carry their own security headers per provider: MTurk shows them inside its frame (frame-ancestors,
 * and no X-Frame-Options, which cannot name other hosts), and forms may post to the provider's submit or
 * completion host (form-action). Everything else stays as strict as the console's.
 */
export function raterHeaders(): Record<ProviderKind, RequestHandler> {
  const build = (frameAncestors: string[], formAction: string[], frameguard: boolean): RequestHandler =>
    fixedHeaders(
      helmet({
        contentSecurityPolicy: {
          directives: {
            'default-src': ["'self'"],
            'script-src': ["'self'"],
            'style-src': ["'self'"],
            'img-src': ["'self'", 'data:'],
            'form-action': ["'self'", ...formAction],
            'frame-ancestors': frameAncestors,
            'upgrade-insecure-requests': null,
          },
        },
        frameguard: frameguard ? { action: 'sameorigin' } : false,
        referrerPolicy: { policy: 'no-referrer' },
      }),
    );
  return {
    // 'self' lets the console show a batch's preview in a frame of its own pages.
    link: build(["'self'"], [], true),
    prolific: build(["'self'"], [PROLIFIC_COMPLETION_HOST], true),
    mturk: build(["'self'", ...MTURK_FRAME_HOSTS], MTURK_SUBMIT_HOSTS, false),
  };
}
