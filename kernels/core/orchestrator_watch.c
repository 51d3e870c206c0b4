#include "orchestrator_watch.h"

#include "record.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* Linux 5.3, the same number on every architecture */
#endif

/* Written once before the thread starts, read only by it. */
static long watched_pid;
static unsigned long long watched_ticks;
static int watched_fd = -1;

unsigned long long cbk_start_ticks(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    unsigned long long ticks = 0;
    if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &ticks) != 1)
        ticks = 0;
    return ticks;
}

static void *watch(void *unused)
{
    (void)unused;
    if (watched_fd >= 0) {
        /* a pidfd reads as ready when its process has exited */
        struct pollfd p = { .fd = watched_fd, .events = POLLIN };
        while (poll(&p, 1, -1) < 0 && errno == EINTR)
            ;
    } else {
        /* a kernel without pidfd_open: look once a second */
        while (cbk_start_ticks(watched_pid) == watched_ticks)
            sleep(1);
    }
    kill(getpid(), SIGTERM);
    return NULL;
}

static int this_boot(const char *boot_id)
{
    char mine[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f)
        return 0;
    if (!fgets(mine, sizeof mine, f))
        mine[0] = '\0';
    fclose(f);
    mine[strcspn(mine, "\n")] = '\0';
    return mine[0] && !strcmp(mine, boot_id);
}

void cbk_watch_orchestrator(void)
{
    const char *value = getenv(CBK_ORCHESTRATOR_ENV);
    char boot_id[64];
    if (!value || sscanf(value, "%63s %ld %llu", boot_id, &watched_pid, &watched_ticks) != 3 || watched_pid <= 0 ||
        !this_boot(boot_id))
        return;
    long fd = syscall(SYS_pidfd_open, (pid_t)watched_pid, 0);
    /* checked after the pidfd is open: a pidfd of a reused pid is not the orchestrator's */
    if (cbk_start_ticks(watched_pid) != watched_ticks) {
        if (fd >= 0)
            close((int)fd);
        /* said before the stop, which alone read as a bare "stopped SIGTERM" */
        char why[256];
        snprintf(why, sizeof why,
                 "%s names process %ld, which is no longer running: cbk stops, as when the clusterbench that "
                 "started it is killed (unset %s to run cbk by hand)",
                 CBK_ORCHESTRATOR_ENV, watched_pid, CBK_ORCHESTRATOR_ENV);
        cbk_error_record(NULL, 1, 0, why, NULL, 0);
        kill(getpid(), SIGTERM);
        return;
    }
    watched_fd = (int)fd;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t thread;
    if (!pthread_create(&thread, NULL, watch, NULL))
        pthread_detach(thread);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}
