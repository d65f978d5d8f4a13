import { UserFacingError } from '../errors/user-facing-error.js';

/**
 * The web's spelling of UserFacingError, status first, for HTTP adapters (web/, auth routes, console/, api/); domain
 * code throws UserFacingError or its feature's subclass, and both render the same way (src/web/error-handler.ts).
 */
export class HttpError extends UserFacingError {
  constructor(status: number, message: string, code?: string) {
    super(message, status, code);
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const forbidden = (message = 'You do not have permission to do this.') => new HttpError(403, message);
export const notFound = (message = 'Not found.') => new HttpError(404, message);
export const conflict = (message: string) => new HttpError(409, message);
