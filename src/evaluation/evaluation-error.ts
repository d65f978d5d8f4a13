import { UserFacingError } from '../errors/user-facing-error.js';

/** A mistake in what was asked of an evaluation (unknown run, nothing to evaluate, ...): one line for the person. */
export class EvaluationInputError extends UserFacingError {}
