/* cbk notices that the clusterbench process that started it is gone (killed
 * with -9, so it could neither stop cbk nor read its output) and stops as
 * Ctrl-C stops it: SIGTERM to itself, whose handler (cleanup.c) removes
 * every private directory. Without this, a kernel that writes no record
 * for a while kept writing until its next record met a closed pipe, and
 * under mpiexec that closed pipe ended mpiexec, whose proxy then killed
 * the ranks with SIGKILL before any could clean up. */
#ifndef CBK_ORCHESTRATOR_WATCH_H
#define CBK_ORCHESTRATOR_WATCH_H

/* The environment variable the runner sets: "BOOT_ID PID START_TICKS" of
 * itself. A rank on another host (another boot id) does not watch: it
 * cannot see that process, and its MPI runtime ends it. */
#define CBK_ORCHESTRATOR_ENV "CLUSTERBENCH_ORCHESTRATOR"

/* Starts the watch (a thread blocked in poll on a pidfd, with every signal
 * blocked so the SIGTERM is handled by the main thread) when the variable
 * names a process of this boot; sends SIGTERM at once if that process is
 * already gone. Call after cbk_cleanup_install. */
void cbk_watch_orchestrator(void);

/* Field 22 of /proc/PID/stat: the process's start in clock ticks since
 * boot (0 if unreadable). With the boot id it tells a live process from a
 * reused pid. */
unsigned long long cbk_start_ticks(long pid);

#endif
