// Locks kept in the database (a generation run's worker, a platform command) name the process that holds them; a
// holder on this host that is gone frees its lock at once.

/** Whether a process of this host is alive. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
