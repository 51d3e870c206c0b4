#include "cgroup_memory.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* v1 writes "no limit" as 2^63 rounded down to a page */
#define NO_LIMIT_BYTES (1ull << 60)

struct hierarchy {
    bool v2;                 /* cgroup2 (memory.max), else v1's memory controller */
    const char *limit_file, *usage_file, *inactive_key;
};

static const struct hierarchy V2 = {true, "memory.max", "memory.current", "inactive_file"};
static const struct hierarchy V1 = {false, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"};

/* A file holding one number; -1 when absent or not a number (v2's "max"). */
static int read_number(const char *dir, const char *file, unsigned long long *v)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fscanf(f, "%llu", v) == 1;
    fclose(f);
    return ok ? 0 : -1;
}

/* The "KEY N" line of a memory.stat; 0 when absent. */
static unsigned long long stat_number(const char *dir, const char *key)
{
    char path[PATH_MAX + 64], name[128];
    unsigned long long v, found = 0;
    snprintf(path, sizeof path, "%s/memory.stat", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    while (fscanf(f, "%127s %llu", name, &v) == 2)
        if (!strcmp(name, key)) {
            found = v;
            break;
        }
    fclose(f);
    return found;
}

/* This process's cgroup path in the hierarchy: v2's "0::PATH" line of
 * /proc/self/cgroup, or the v1 line whose controllers include memory. */
static bool own_path(const struct hierarchy *h, char *path, size_t len)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[PATH_MAX + 256];
    bool found = false;
    if (!f)
        return false;
    while (!found && fgets(line, sizeof line, f)) {
        char *controllers = strchr(line, ':'), *p = controllers ? strchr(controllers + 1, ':') : NULL;
        if (!p)
            continue;
        *p++ = '\0';
        *controllers++ = '\0';   /* line is the hierarchy's number alone now */
        p[strcspn(p, "\n")] = '\0';
        if (h->v2 ? !strncmp(line, "0", 2) && !*controllers : strstr(controllers, "memory") != NULL) {
            snprintf(path, len, "%s", p);
            found = true;
        }
    }
    fclose(f);
    return found;
}

/* mountinfo writes a space, tab, newline or backslash in a path as \ooo
 * (a cgroup "job 1" is "/job\0401"); decoded in place. */
static void decode_octal_escapes(char *s)
{
    char *out = s;
    for (; *s; s++, out++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
            *out = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else {
            *out = *s;
        }
    }
    *out = '\0';
}

/* The mount of the hierarchy that shows this process's cgroup REL, from
 * mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL..] - FSTYPE
 * SOURCE SUPEROPTS". ROOT is the cgroup the mount starts at: a container's
 * shows its own cgroup, and one made outside this process's cgroup
 * namespace shows "/.." and holds none of it, so the first mount of the
 * type is not always the one; *root_len is how much of REL ROOT spans. */
static bool mount_of(const struct hierarchy *h, const char *rel, char *point, size_t len, size_t *root_len)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[2 * PATH_MAX + 512];
    bool found = false;
    if (!f)
        return false;
    while (!found && fgets(line, sizeof line, f)) {
        char r[PATH_MAX], m[PATH_MAX], type[64], super[512] = "";
        char *tail = strstr(line, " - ");
        if (!tail || sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2 ||
            sscanf(tail + 3, "%63s %*s %511s", type, super) < 1)
            continue;
        if (h->v2 ? strcmp(type, "cgroup2") != 0 : strcmp(type, "cgroup") != 0 || !strstr(super, "memory"))
            continue;
        decode_octal_escapes(r);
        decode_octal_escapes(m);
        size_t spans = strcmp(r, "/") ? strlen(r) : 0;
        if (strncmp(rel, r, spans) || (rel[spans] && rel[spans] != '/'))
            continue;   /* the process's cgroup is outside what this mount shows */
        snprintf(point, len, "%s", m);
        *root_len = spans;
        found = true;
    }
    fclose(f);
    return found;
}

/* The smallest headroom of the cgroups from this process's up to the
 * top its mount shows, in KiB; -1 when none has a limit. */
static long headroom_in(const struct hierarchy *h)
{
    char rel[PATH_MAX], point[PATH_MAX], dir[PATH_MAX];
    size_t root_len;
    if (!own_path(h, rel, sizeof rel) || !mount_of(h, rel, point, sizeof point, &root_len))
        return -1;
    char *below = rel + root_len;
    long smallest = -1;
    for (;;) {
        unsigned long long limit, usage;
        int dir_len = snprintf(dir, sizeof dir, "%s%s", point, below);
        if (dir_len > 0 && (size_t)dir_len < sizeof dir && !read_number(dir, h->limit_file, &limit) && limit < NO_LIMIT_BYTES &&
            !read_number(dir, h->usage_file, &usage)) {
            unsigned long long reach = limit + stat_number(dir, h->inactive_key);
            unsigned long long room = reach > usage ? reach - usage : 0;
            long kib = (long)((room < limit ? room : limit) / 1024);
            if (smallest < 0 || kib < smallest)
                smallest = kib;
        }
        char *slash = strrchr(below, '/');
        if (!slash || !*below)
            break;
        *slash = '\0';
    }
    return smallest;
}

long cbk_cgroup_headroom_kib(void)
{
    long v1 = headroom_in(&V1), v2 = headroom_in(&V2);
    if (v1 < 0)
        return v2;
    return v2 < 0 || v1 < v2 ? v1 : v2;
}
