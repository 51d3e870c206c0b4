/* Removal of what a run created, at exit and on SIGINT/SIGTERM/SIGHUP.
 * Kernels create their files only inside private directories registered
 * here; cleanup empties and removes exactly those directories (it never
 * follows a path it was not given), so nothing the toolkit did not create
 * is touched. The handler uses only async-signal-safe calls (open,
 * getdents64, unlinkat, rmdir), hence the fixed-size table below. */
#ifndef CBK_CLEANUP_H
#define CBK_CLEANUP_H

#include <stddef.h>
#include <stdint.h>

#define CBK_CLEANUP_DIRS 8
#define CBK_PATH_MAX 4096
/* Directory levels cleanup descends below a private directory. */
#define CBK_CLEANUP_DEPTH 48

/* Installs the signal handlers; call once before any file is created.
 * SIGHUP and SIGQUIT are left as they are where they were ignored at
 * start (nohup, a shell's background job); SIGINT is always taken. */
void cbk_cleanup_install(void);

/* Creates a fresh private directory "<parent>/cbk-<tag>-XXXXXX", registers
 * it and writes its path to `out`. Returns 0 or -errno. */
int cbk_private_dir(const char *parent, const char *tag, char *out, size_t out_len);

/* The owner stamp every private directory holds from its creation on:
 * one JSON line (host, boot id, pid, process start in clock ticks, start
 * time, cbk's run id, the store's run id from $CLUSTERBENCH_RUN). The
 * Python side (clusterbench/run/private_dirs.py) reads it to remove the
 * directories of owners that are gone. */
#define CBK_OWNER_STAMP ".cbk-owner"

/* Sets the run id written into stamps (call before any private dir). */
void cbk_cleanup_set_run_id(uint64_t run_id);

/* Writes this process's owner stamp into `dir` (O_EXCL). Returns 0 or -errno. */
int cbk_write_owner_stamp(const char *dir);

/* Where a directory is, as this process sees it: the machine (boot id) and
 * the directory's device and inode. Two processes with equal places see one
 * directory: the same machine and the same file system behind the path. */
struct cbk_dir_place {
    char boot_id[40];
    uint64_t dev, ino;
};
/* Fills `out` (zeroed first, so two places compare with memcmp); 0 or -errno. */
int cbk_dir_place(const char *dir, struct cbk_dir_place *out);

/* Registers an existing directory another process created (e.g. rank 0's
 * private directory, its name broadcast to the other ranks), so this
 * process removes it too on exit and on signals. Returns 0 or -errno. */
int cbk_cleanup_register(const char *path);

/* The registered directories not yet removed (at most max), and the run
 * id the stamps carry: what core/neighbours.c looks beside. */
int cbk_cleanup_dirs(const char *out[], int max);
uint64_t cbk_cleanup_run_id(void);

/* Empties and removes every registered directory (idempotent). */
void cbk_cleanup_run(void);

#endif
