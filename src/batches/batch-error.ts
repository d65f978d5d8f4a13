/**
 * A batch request that cannot be carried out as asked (unknown run, frozen setting, forbidden transition).
 * `userFacing` lets the CLI print it as one line; the console maps `status` to its HTTP answer.
 */
export class BatchError extends Error {
  readonly userFacing = true;
  constructor(
    message: string,
    readonly status: 400 | 404 | 409 = 400,
  ) {
    super(message);
  }
}
