import type { Response } from 'express';

/**
 * A 303 See Other to `url` with an empty body: Express's `res.redirect` negotiates the request's Accept header to
 * write a "Redirecting to …" note that browsers never show, and marks the response Vary: Accept; on the rater path
 * every answer and every step ends in a redirect (issue 12).
 */
export function seeOther(res: Response, url: string): void {
  res.status(303).location(url).set('Content-Length', '0').end();
}
