import { UserFacingError } from '../errors/user-facing-error.js';

/** A problem the person starting a run must fix (bad scenario id, unknown endpoint, wrong key): one clear line. */
export class GenerationInputError extends UserFacingError {}
