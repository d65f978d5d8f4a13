/** A statistic that may be undefined for the data: the value, or null with the reason (never NaN). */
export type Maybe<T extends object> = (T & { reason?: undefined }) | ({ [K in keyof T]: null } & { reason: string });

/** A number rounded away from -0 and guarded against NaN/Infinity, for JSON output. */
export function finiteOrNull(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}
