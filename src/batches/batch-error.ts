import { UserFacingError } from '../errors/user-facing-error.js';

/** A batch request that cannot be carried out as asked (unknown run, frozen setting, forbidden transition). */
export class BatchError extends UserFacingError {}
