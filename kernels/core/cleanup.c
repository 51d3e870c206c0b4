#include "cleanup.h"
#include "mpich_slab.h"
#include "orchestrator_watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The only mutable file-scope state in cbk: a signal handler cannot be
 * handed a context, so the directories to remove must live here. */
static char dirs[CBK_CLEANUP_DIRS][CBK_PATH_MAX];
static volatile sig_atomic_t dir_count;
/* The owner stamp's run id (cbk's per-invocation id, one for all ranks). */
static uint64_t owner_run_id;

struct linux_dirent64 {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Our private directories hold plain files, per-rank subdirectories, or
 * (metadata) trees of directories down to CBK_CLEANUP_DEPTH levels; each
 * level costs a 4 KiB buffer of stack and one descriptor. The owner stamp
 * of a private directory (depth 1) goes last, by the caller
 * (remove_private_dir): a cleanup cut short by SIGKILL (a launcher ending
 * the ranks) leaves a directory that still says whose it is, which `clean`
 * and the next run remove; without the stamp nothing may. */
static void empty_dir(int dfd, int depth)
{
    char buf[4096];
    /* Unlinking while reading a directory may skip entries, so read it
     * again from the start until a pass removes nothing. */
    for (int removed = 1; removed;) {
        removed = 0;
        lseek(dfd, 0, SEEK_SET);
        long n;
        while ((n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
            for (long off = 0; off < n;) {
                struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
                off += d->d_reclen;
                if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..") ||
                    (depth == 1 && !strcmp(d->d_name, CBK_OWNER_STAMP)))
                    continue;
                if (!unlinkat(dfd, d->d_name, 0)) {
                    removed++;
                } else if (errno == EISDIR && depth < CBK_CLEANUP_DEPTH) {
                    int sub = openat(dfd, d->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
                    if (sub >= 0) {
                        empty_dir(sub, depth + 1);
                        close(sub);
                    }
                    if (!unlinkat(dfd, d->d_name, AT_REMOVEDIR))
                        removed++;
                }
            }
        }
    }
}

/* The stamp moved from `dfd` to `beside`, never over a file already there:
 * a hard link, then the unlink (rename(2) replaces what it finds). 0 when
 * it is beside (moved by a peer, too); -1 when a file not ours holds the
 * name, and the stamp stays in. Where the file system has no hard links,
 * rename: the name is the mkdtemp name of a directory of ours plus ours. */
static int move_stamp_beside(int dfd, const char *beside)
{
    struct stat in, out;
    if (fstatat(dfd, CBK_OWNER_STAMP, &in, AT_SYMLINK_NOFOLLOW))
        return 0; /* ENOENT: a peer moved it already */
    if (linkat(dfd, CBK_OWNER_STAMP, AT_FDCWD, beside, 0)) {
        if (errno != EEXIST)
            return renameat(dfd, CBK_OWNER_STAMP, AT_FDCWD, beside) && errno != ENOENT ? -1 : 0;
        /* a peer's link, or not ours */
        if (lstat(beside, &out) || out.st_dev != in.st_dev || out.st_ino != in.st_ino)
            return -1;
    }
    unlinkat(dfd, CBK_OWNER_STAMP, 0);
    return 0;
}

/* One private directory removed: its files, then the directory, then its
 * owner stamp, so that at no moment is there a directory of ours that does
 * not say so. The stamp cannot stay inside until the rmdir (a directory
 * must be empty to go), and taken out first it left an empty unstamped
 * cbk-pario-XXXXXX whenever a SIGKILL landed between the unlink and the
 * rmdir: a launcher kills the ranks within a millisecond of a clusterbench
 * killed by -9, as their clean-up starts (4 in 250 runs, 2026-12-07).
 * So the stamp is moved beside the directory, as "<dir>.cbk-owner" (a
 * link, then the unlink: the stamp is always at one of the two places),
 * the directory is removed, then the stamp. `clean` and the next run read
 * a stamp beside a directory as one inside it.
 * Another rank may work in the directory (pario's and metadata's ranks
 * share rank 0's) and stop a moment later: an rmdir that meets its file
 * (ENOTEMPTY) tries again 50 ms later, for 3 s at most (a second was too
 * short for a peer descheduled on a loaded node); every rank keeps trying
 * while the directory is there, since a launcher SIGKILLs the ranks still
 * running once one has ended. Signal-safe: no stdio, no malloc. */
static void remove_private_dir(const char *dir)
{
    char beside[CBK_PATH_MAX + sizeof CBK_OWNER_STAMP];
    size_t n = strlen(dir);
    memcpy(beside, dir, n);
    memcpy(beside + n, CBK_OWNER_STAMP, sizeof CBK_OWNER_STAMP);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (dfd < 0) {
        /* gone: a peer removed it and may have been killed before its stamp */
        if (errno == ENOENT)
            unlink(beside);
        return;
    }
    for (int tries = 0; tries < 60; tries++) {
        empty_dir(dfd, 1);
        if (move_stamp_beside(dfd, beside))
            break; /* left stamped, for `clean` to say why it cannot remove it */
        if (!rmdir(dir) || errno == ENOENT) {
            unlink(beside);
            break;
        }
        if (errno != ENOTEMPTY)
            break; /* left with its stamp beside it, for `clean` */
        struct timespec pause = { 0, 50 * 1000 * 1000 };
        nanosleep(&pause, NULL);
    }
    close(dfd);
}

void cbk_cleanup_run(void)
{
    /* a stop signal in the middle waits for the end: its handler would
     * start the same removal over, and end the process, in the middle */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    for (int i = dir_count - 1; i >= 0; i--) {
        if (!dirs[i][0])
            continue;
        remove_private_dir(dirs[i]);
        dirs[i][0] = '\0';
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The record a signal leaves on stderr before cbk ends by it: whoever
 * started cbk learns it was stopped, not failed, whatever exit status its
 * launcher reports for a rank ended by a signal (Hydra's mpiexec exits 2,
 * the status of bad input). Written whole, by write(2): async-signal-safe. */
#define STOPPED(name) "{\"schema\":1,\"type\":\"stopped\",\"kernel\":null,\"signal\":\"" name "\"}\n"
static const struct {
    int sig;
    const char *line;
} stopped_lines[] = {
    { SIGINT, STOPPED("SIGINT") },   { SIGTERM, STOPPED("SIGTERM") }, { SIGHUP, STOPPED("SIGHUP") },
    { SIGQUIT, STOPPED("SIGQUIT") }, { SIGPIPE, STOPPED("SIGPIPE") }, { SIGXFSZ, STOPPED("SIGXFSZ") },
    { SIGXCPU, STOPPED("SIGXCPU") }, { SIGALRM, STOPPED("SIGALRM") }, { SIGUSR1, STOPPED("SIGUSR1") },
    { SIGUSR2, STOPPED("SIGUSR2") },
};

static void say_stopped(int sig)
{
    for (size_t i = 0; i < sizeof stopped_lines / sizeof *stopped_lines; i++) {
        if (stopped_lines[i].sig == sig) {
            int saved = errno;
            ssize_t unused = write(STDERR_FILENO, stopped_lines[i].line, strlen(stopped_lines[i].line));
            (void)unused; /* nothing to do if stderr is gone too */
            errno = saved;
            return;
        }
    }
}

static void on_signal(int sig)
{
    /* said before the files go: another rank that works in the same private
     * directory fails on the vanished files and aborts the job, and its
     * launcher may kill this rank before a line written afterwards is out
     * (pario stored failed, not interrupted, in 2 of about 30 suite runs) */
    if (sig != SIGPIPE) /* a reader that went away: stderr may be the same pipe */
        say_stopped(sig);
    cbk_cleanup_run();
    cbk_mpich_remove_slabs();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The signals that stay ignored when cbk was started with them ignored, as
 * POSIX utilities leave them: nohup ignores SIGHUP so that a run outlives
 * its terminal's hangup, and a shell without job control ignores SIGQUIT
 * (and SIGINT) in its background jobs. SIGINT is taken whatever it was: it
 * is how clusterbench stops a launch (one SIGINT to every process of it),
 * and a clusterbench started as a script's background job has SIGINT
 * ignored, which its launches inherit; left ignored, cbk would run on to
 * the SIGKILL and leave its files. */
static const int kept_if_ignored[] = { SIGHUP, SIGQUIT };

/* Which of them were ignored when cbk was exec'd, read before any shared
 * library's constructor runs: UCX's libucs (under MPICH and Open MPI)
 * takes SIGHUP for its debug signal (UCX_DEBUG_SIGNO) in its constructor,
 * so by main() an ignored SIGHUP had UCX's handler and read as taken.
 * Mutable file-scope state as dirs above is, for the same reason: the
 * loader calls the reader with no context (written once, before main). */
static int ignored_at_exec[sizeof kept_if_ignored / sizeof *kept_if_ignored];
static int read_at_exec;

static void read_ignored_at_exec(int argc, char **argv, char **envp)
{
    (void)argc, (void)argv, (void)envp;
    for (size_t i = 0; i < sizeof kept_if_ignored / sizeof *kept_if_ignored; i++) {
        struct sigaction now;
        ignored_at_exec[i] = sigaction(kept_if_ignored[i], NULL, &now) == 0 && now.sa_handler == SIG_IGN;
    }
    read_at_exec = 1;
}

/* An executable's .preinit_array runs before the initializers of every
 * shared object it loads (ELF gABI); where it is not run, the disposition
 * is read when the handlers are installed instead. */
__attribute__((section(".preinit_array"), used))
static void (*const read_ignored_at_exec_early)(int, char **, char **) = read_ignored_at_exec;

/* Whether sig is to stay ignored; then it is made ignored again, whatever
 * a library made of it since. */
static int kept_ignored(int sig)
{
    for (size_t i = 0; i < sizeof kept_if_ignored / sizeof *kept_if_ignored; i++) {
        if (kept_if_ignored[i] != sig)
            continue;
        struct sigaction now;
        int ignored = read_at_exec ? ignored_at_exec[i]
                                   : sigaction(sig, NULL, &now) == 0 && now.sa_handler == SIG_IGN;
        if (ignored)
            signal(sig, SIG_IGN);
        return ignored;
    }
    return 0;
}

void cbk_cleanup_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    /* one stop at a time: a second signal (Ctrl-C twice, a batch system's
     * SIGTERM after its warning) waits until the first has removed the files */
    sigfillset(&sa.sa_mask);
    /* every signal whose default ends the process: a reader that went away
     * (SIGPIPE from `cbk ... | head`), a file-size or CPU limit, a batch
     * system's warning signal */
    int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ, SIGXCPU, SIGALRM, SIGUSR1, SIGUSR2 };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        if (!kept_ignored(sigs[i]))
            sigaction(sigs[i], &sa, NULL);
    }
}

void cbk_cleanup_set_run_id(uint64_t run_id)
{
    owner_run_id = run_id;
}

uint64_t cbk_cleanup_run_id(void)
{
    return owner_run_id;
}

int cbk_cleanup_dirs(const char *out[], int max)
{
    int n = 0;
    for (int i = 0; i < dir_count && n < max; i++)
        if (dirs[i][0])
            out[n++] = dirs[i];
    return n;
}

static void read_line(const char *path, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(out, (int)len, f))
        out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

/* The stamp appears whole or not at all: written to an unnamed file
 * (O_TMPFILE) then linked in, so a kill -9 between creating and writing it
 * cannot leave an empty stamp that `clean` could never read as ours, and a
 * reader never catches it half written. File systems without O_TMPFILE
 * (NFS, FUSE) get the text composed first and written by one call. */
static int write_whole(const char *dir, const char *path, const char *text, size_t len)
{
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        int rc = write(fd, text, len) == (ssize_t)len ? 0 : -EIO;
        if (!rc && linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW))
            rc = -errno;
        if (close(fd) && !rc)
            rc = -errno;
        if (rc != -ENOENT) /* ENOENT: no /proc to link it through; write it in place */
            return rc;
    } else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
        return -errno;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc = write(fd, text, len) == (ssize_t)len ? 0 : -EIO;
    if (close(fd) && !rc)
        rc = -errno;
    return rc;
}

int cbk_write_owner_stamp(const char *dir)
{
    char path[CBK_PATH_MAX + 32], host[256] = "", boot[64];
    int n = snprintf(path, sizeof path, "%s/" CBK_OWNER_STAMP, dir);
    if (n < 0 || (size_t)n >= sizeof path)
        return -ENAMETOOLONG;
    gethostname(host, sizeof host - 1);
    host[strcspn(host, "\"\\")] = '\0'; /* a host name never holds them; keep the JSON valid */
    read_line("/proc/sys/kernel/random/boot_id", boot, sizeof boot);
    boot[strspn(boot, "0123456789abcdef-")] = '\0';
    /* written as a JSON number: only a whole run id of digits, without the
     * leading zeros JSON forbids ("007" made the stamp unreadable, so clean
     * never proved the directory cbk's); anything else is null */
    const char *store_run = getenv("CLUSTERBENCH_RUN");
    char run[24] = "";
    if (store_run && *store_run && !store_run[strspn(store_run, "0123456789")]) {
        const char *significant = store_run + strspn(store_run, "0");
        if (!*significant)
            significant = "0";
        if (strlen(significant) < sizeof run)
            snprintf(run, sizeof run, "%s", significant);
    }
    char text[1024];
    int len = snprintf(text, sizeof text,
                       "{\"owner\":\"cbk\",\"host\":\"%s\",\"boot_id\":\"%s\",\"pid\":%ld,"
                       "\"start_ticks\":%llu,\"started_unix_s\":%lld,\"run_id\":\"%016" PRIx64 "\",\"store_run\":%s}\n",
                       host, boot, (long)getpid(), cbk_start_ticks((long)getpid()), (long long)time(NULL), owner_run_id,
                       run[0] ? run : "null");
    if (len < 0 || (size_t)len >= sizeof text)
        return -EIO;
    return write_whole(dir, path, text, (size_t)len);
}

int cbk_dir_place(const char *dir, struct cbk_dir_place *out)
{
    memset(out, 0, sizeof *out);
    read_line("/proc/sys/kernel/random/boot_id", out->boot_id, sizeof out->boot_id);
    struct stat st;
    if (stat(dir, &st))
        return -errno;
    out->dev = (uint64_t)st.st_dev;
    out->ino = (uint64_t)st.st_ino;
    return 0;
}

int cbk_private_dir(const char *parent, const char *tag, char *out, size_t out_len)
{
    if (dir_count == CBK_CLEANUP_DIRS)
        return -EMFILE;
    int n = snprintf(out, out_len, "%s/cbk-%s-XXXXXX", parent, tag);
    if (n < 0 || (size_t)n >= out_len || (size_t)n >= CBK_PATH_MAX)
        return -ENAMETOOLONG;
    /* Block signals while the directory exists but is not yet registered. */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    int rc = 0;
    if (!mkdtemp(out)) {
        rc = -errno;
    } else {
        memcpy(dirs[dir_count], out, (size_t)n + 1);
        dir_count++;
        /* stamped before any data goes in: a kill -9 from here on leaves a
         * directory `clusterbench clean` can prove is ours and orphaned */
        rc = cbk_write_owner_stamp(out);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int cbk_cleanup_register(const char *path)
{
    size_t n = strlen(path);
    if (dir_count == CBK_CLEANUP_DIRS)
        return -EMFILE;
    if (n >= CBK_PATH_MAX)
        return -ENAMETOOLONG;
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    memcpy(dirs[dir_count], path, n + 1);
    dir_count++;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return 0;
}
