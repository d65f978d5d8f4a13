export function takeGate(cell: Int32Array, timeoutMs: number): boolean;
export function freeGate(cell: Int32Array): void;
