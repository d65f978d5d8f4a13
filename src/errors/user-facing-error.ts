/**
 * A failure whose message is written for the person who asked: a request a feature refuses as asked (unknown batch,
 * frozen setting, bad export option), a file or setting to fix, or stored data the operator must repair. It is the one
 * error type every channel knows: the web answers it with `status` and `code` (an HTML page or JSON, in
 * src/web/error-handler.ts), the CLI prints its message as one line (src/cli/main.ts). Anything else is an internal
 * error: logged, and shown only as "something went wrong".
 * Each feature names its own subclass (BatchError, ExportError, ScenarioFileError, ...) so callers can tell whose
 * refusal it is.
 */
export class UserFacingError extends Error {
  constructor(
    message: string,
    /** The HTTP status: 4xx for the request's fault, 5xx for the server's (damaged stored data, storage, config). */
    readonly status: number = 400,
    /** A stable machine-readable code, in the API's JSON `error.code`. */
    readonly code: string = codeForStatus(status),
  ) {
    super(message);
  }
}

export function codeForStatus(status: number): string {
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
