/** Injected time, so tests can fix it; production passes `() => new Date()`. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
