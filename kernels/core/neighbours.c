#include "neighbours.h"

#include "cleanup.h"
#include "orchestrator_watch.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The text of a stamp's "key":"value" (or a bare number) into out; 0 if absent. */
static int stamp_field(const char *stamp, const char *key, char *out, size_t len)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *at = strstr(stamp, pattern);
    if (!at)
        return 0;
    at += strlen(pattern);
    at += strspn(at, " \t");   /* JSON allows it; another writer than cbk may put it there */
    int quoted = *at == '"';
    at += quoted;
    size_t n = quoted ? strcspn(at, "\"") : strcspn(at, ",}");
    if (n >= len)
        return 0;
    memcpy(out, at, n);
    out[n] = '\0';
    return 1;
}

static void read_small(int dir_fd, const char *name, char *out, size_t len)
{
    out[0] = '\0';
    int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, len - 1);
    close(fd);
    out[n > 0 ? n : 0] = '\0';
}

/* A live process of this host whose start matches the stamp's: its owner. */
static int owner_alive(const char *stamp, const char *host, const char *boot)
{
    char h[256], b[64], pid[32], ticks[32];
    if (!stamp_field(stamp, "host", h, sizeof h) || strcmp(h, host) ||
        !stamp_field(stamp, "boot_id", b, sizeof b) || strcmp(b, boot) ||
        !stamp_field(stamp, "pid", pid, sizeof pid) || !stamp_field(stamp, "start_ticks", ticks, sizeof ticks))
        return 0;
    unsigned long long now = cbk_start_ticks(strtol(pid, NULL, 10));
    return now && now == strtoull(ticks, NULL, 10);
}

/* Looks in the parent of one of this run's directories. */
static int look_beside(const char *mine, const char *host, const char *boot, const char *run_id,
                       char *what, size_t len)
{
    char parent[CBK_PATH_MAX];
    snprintf(parent, sizeof parent, "%s", mine);
    char *slash = strrchr(parent, '/');
    if (!slash)
        return 0;
    const char *own_name = mine + (slash - parent) + 1;
    *slash = '\0';
    DIR *d = opendir(parent[0] ? parent : "/");
    if (!d)
        return 0;
    int seen = 0;
    struct dirent *e;
    while (!seen && (e = readdir(d))) {
        if (strncmp(e->d_name, "cbk-", 4) || !strcmp(e->d_name, own_name))
            continue;
        int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0)
            continue;
        char stamp[1024], owner[8], their_run[32], store_run[32];
        read_small(sub, CBK_OWNER_STAMP, stamp, sizeof stamp);
        close(sub);
        if (!stamp_field(stamp, "owner", owner, sizeof owner) || strcmp(owner, "cbk") || !stamp_field(stamp, "run_id", their_run, sizeof their_run) ||
            !strcmp(their_run, run_id) || !owner_alive(stamp, host, boot))
            continue;
        char pid[32] = "?";
        stamp_field(stamp, "pid", pid, sizeof pid);
        int has_run = stamp_field(stamp, "store_run", store_run, sizeof store_run) && strcmp(store_run, "null");
        snprintf(what, len, "another cbk (pid %s%s%s) works beside this run in %s: its I/O shares the device, "
                 "so this figure is not the device's alone", pid, has_run ? ", run " : "", has_run ? store_run : "",
                 parent[0] ? parent : "/");
        seen = 1;
    }
    closedir(d);
    return seen;
}

int cbk_neighbour_seen(char *what, size_t len)
{
    const char *mine[CBK_CLEANUP_DIRS];
    int n = cbk_cleanup_dirs(mine, CBK_CLEANUP_DIRS);
    if (!n)
        return 0;
    char host[256] = "", boot[64] = "", run_id[32];
    gethostname(host, sizeof host - 1);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (fgets(boot, sizeof boot, f))
            boot[strcspn(boot, "\n")] = '\0';
        fclose(f);
    }
    snprintf(run_id, sizeof run_id, "%016" PRIx64, cbk_cleanup_run_id());
    for (int i = 0; i < n; i++)
        if (look_beside(mine[i], host, boot, run_id, what, len))
            return 1;
    return 0;
}
