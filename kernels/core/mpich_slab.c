#include "mpich_slab.h"

#ifdef CBK_HAVE_MPI
#include <mpi.h>
#endif

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLAB_DIR "/dev/shm/"
#define SLAB_PREFIX SLAB_DIR "mpich_"

#if defined(CBK_HAVE_MPI) && defined(MPICH_VERSION)

/* The tries before giving up and running under a taken pid (MPI_Init then
 * says what it says): each draws a new pid, about one in ten taken. */
#define FRESH_PID_TRIES 32

static pid_t child_pid;

/* Started by a process manager (Hydra, Slurm's PMI-2, PMIx), MPICH names
 * the slab after the job's key-value space, not the pid. */
static bool singleton(void)
{
    const char *managed[] = { "PMI_FD", "PMI_PORT", "PMI_RANK", "PMIX_RANK", "PMIX_NAMESPACE" };
    for (size_t i = 0; i < sizeof managed / sizeof *managed; i++)
        if (getenv(managed[i]))
            return false;
    return true;
}

static void slab_path(pid_t pid, const char *kind, char *out, size_t len)
{
    snprintf(out, len, SLAB_PREFIX "%s_%x_0", kind, (unsigned)pid);
}

/* Whether pid's slab name is held by a file this user may not open: another
 * user's, left by a killed job (MPI_Init then fails). This user's own stale
 * file MPICH opens and reuses, so none is forked away from (a fork costs a
 * kill -9 of cbk's pid its exactness: the child ends after it, not with it). */
static bool slab_blocks(pid_t pid)
{
    char path[64];
    slab_path(pid, "shm", path, sizeof path);
    if (access(path, F_OK) != 0)
        return errno != ENOENT;
    return access(path, R_OK | W_OK) != 0;
}

static void pass_on(int sig)
{
    int saved = errno;
    kill(child_pid, sig);
    errno = saved;
}

/* The parent's life once the child runs: a stop signal sent to this pid
 * (a user's kill, a batch system's warning) reaches the child, whose
 * handler removes its files; sent to the whole tree (clusterbench's stop),
 * the child has it twice, and the second waits until the first is handled. */
static _Noreturn void wait_for(pid_t child)
{
    child_pid = child;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = pass_on;
    sigemptyset(&sa.sa_mask);
    int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXFSZ, SIGXCPU, SIGALRM, SIGUSR1, SIGUSR2 };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaction(sigs[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* the child writes the records; it meets a closed pipe itself */
    int status;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR)
            _exit(1);
    if (WIFEXITED(status))
        _exit(WEXITSTATUS(status));
    int sig = WTERMSIG(status);
    char path[64];
    /* ours: the name was free when the child started */
    slab_path(child, "shm", path, sizeof path);
    unlink(path);
    slab_path(child, "vci", path, sizeof path);
    unlink(path);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    _exit(128 + sig);
}

void cbk_mpich_fresh_singleton_pid(void)
{
    if (!singleton() || !slab_blocks(getpid()))
        return;
    pid_t parent = getpid();
    fflush(NULL); /* nothing buffered is written twice */
    for (int i = 0; i < FRESH_PID_TRIES; i++) {
        int go[2];
        if (pipe(go))
            return;
        pid_t child = fork();
        if (child < 0) {
            close(go[0]);
            close(go[1]);
            return;
        }
        if (child == 0) {
            /* a kill -9 of the pid its starter knows ends this one too, not
             * an orphan measuring on (the parent cannot pass SIGKILL on) */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(1);
            close(go[1]);
            char verdict = 0;
            ssize_t got;
            while ((got = read(go[0], &verdict, 1)) < 0 && errno == EINTR)
                ;
            close(go[0]);
            if (got != 1 || verdict != 'y')
                _exit(0); /* its pid is taken too; the parent draws another */
            return;
        }
        close(go[0]);
        bool free_pid = !slab_blocks(child);
        ssize_t unused = write(go[1], free_pid ? "y" : "n", 1);
        (void)unused; /* a child that did not read it exits at EOF */
        close(go[1]);
        if (free_pid)
            wait_for(child);
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
            ;
    }
}

#else

void cbk_mpich_fresh_singleton_pid(void)
{
}

#endif

#define NOTED_MAX 4

static char noted[NOTED_MAX][256];
static int noted_count;

void cbk_mpich_note_slabs(void)
{
#if defined(CBK_HAVE_MPI) && defined(MPICH_VERSION)
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return;
    char line[4096];
    uid_t me = geteuid();
    while (noted_count < NOTED_MAX && fgets(line, sizeof line, maps)) {
        char *path = strstr(line, SLAB_PREFIX);
        if (!path)
            continue;
        path[strcspn(path, "\n")] = '\0';
        struct stat st;
        bool seen = false;
        for (int i = 0; i < noted_count; i++)
            seen = seen || !strcmp(noted[i], path);
        /* one already removed shows as "PATH (deleted)", which stat does not find */
        if (!seen && strlen(path) < sizeof noted[0] && stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == me)
            strcpy(noted[noted_count++], path);
    }
    fclose(maps);
#endif
}

void cbk_mpich_remove_slabs(void)
{
    for (int i = 0; i < noted_count; i++)
        unlink(noted[i]);
}
