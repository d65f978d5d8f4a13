/** An error that carries the HTTP status and a message a person can act on. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string = codeFor(status),
  ) {
    super(message);
  }
}

/**
 * A request a feature refuses as asked (unknown batch, frozen setting, bad export option): the message is for the
 * person who asked. `userFacing` lets the CLI print it as one line; the console and the API answer with `status`.
 * Each feature names its own subclass (BatchError, ExportError) so callers can tell whose refusal it is.
 */
export class UserError extends Error {
  readonly userFacing = true;
  constructor(
    message: string,
    readonly status: 400 | 404 | 409 = 400,
  ) {
    super(message);
  }
}

function codeFor(status: number): string {
  switch (status) {
    case 400:
      return 'bad_request';
    case 401:
      return 'unauthenticated';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 409:
      return 'conflict';
    case 410:
      return 'gone';
    case 413:
      return 'too_large';
    case 429:
      return 'too_many_requests';
    default:
      return status >= 500 ? 'internal' : 'error';
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const forbidden = (message = 'You do not have permission to do this.') => new HttpError(403, message);
export const notFound = (message = 'Not found.') => new HttpError(404, message);
export const conflict = (message: string) => new HttpError(409, message);
