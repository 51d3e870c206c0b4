#include "pagecache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const cbk_cold_method_names[] = {
    [CBK_COLD_AUTO] = "auto", [CBK_COLD_DROP_CACHES] = "drop-caches", [CBK_COLD_FADVISE] = "fadvise", NULL,
};
const char *const cbk_cold_or_none_names[] = {
    [CBK_COLD_AUTO] = "auto", [CBK_COLD_DROP_CACHES] = "drop-caches", [CBK_COLD_FADVISE] = "fadvise",
    [CBK_COLD_NONE] = "none", NULL,
};

double cbk_resident_worst(double a, double b)
{
    return a < 0 || b < 0 ? -1.0 : a > b ? a : b;
}

double cbk_resident_fraction(int fd, uint64_t file_bytes)
{
    if (file_bytes == 0)
        return 0.0;
    long page = sysconf(_SC_PAGESIZE);
    size_t pages = (size_t)((file_bytes + (uint64_t)page - 1) / (uint64_t)page);
    void *map = mmap(NULL, (size_t)file_bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return -1.0;
    unsigned char *vec = malloc(pages);
    double fraction = -1.0;
    if (vec && !mincore(map, (size_t)file_bytes, vec)) {
        size_t resident = 0;
        for (size_t i = 0; i < pages; i++)
            resident += vec[i] & 1;
        fraction = (double)resident / (double)pages;
    }
    free(vec);
    munmap(map, (size_t)file_bytes);
    return fraction;
}

#define DROP_CACHES_PATH "/proc/sys/vm/drop_caches"

int cbk_check_cold_method(enum cbk_cold_method method, const char *option, char *why, size_t len)
{
    if (method != CBK_COLD_DROP_CACHES || faccessat(AT_FDCWD, DROP_CACHES_PATH, W_OK, AT_EACCESS) == 0)
        return 0;
    snprintf(why, len, "%s=drop-caches needs to write %s, which this user may not (%s): "
             "%s=fadvise or auto empty the file's own pages as any user", option, DROP_CACHES_PATH, strerror(errno), option);
    return -1;
}

static int drop_all_caches(void)
{
    sync();
    int fd = open(DROP_CACHES_PATH, O_WRONLY);
    if (fd < 0)
        return -errno;
    int rc = write(fd, "3", 1) == 1 ? 0 : -errno;
    close(fd);
    return rc;
}

static int forget_file(int fd)
{
    if (fdatasync(fd))
        return -errno;
    int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    return rc ? -rc : 0;
}

/* auto: the file's own pages first (fdatasync + DONTNEED), checked with
 * mincore(): nothing else on the machine is written back or evicted, which
 * on a shared node is other users' cache (and in a test suite, every other
 * test's). Only when they stay resident (a file system that ignores the
 * advice) does root empty the whole page cache, as administrators do. */
int cbk_make_cold(int fd, enum cbk_cold_method method, const char **used)
{
    if (method == CBK_COLD_DROP_CACHES) {
        *used = "drop-caches";
        return drop_all_caches();
    }
    *used = "fadvise";
    int rc = forget_file(fd);
    if (method != CBK_COLD_AUTO)
        return rc;
    struct stat st;
    double resident = rc == 0 && fstat(fd, &st) == 0 ? cbk_resident_fraction(fd, (uint64_t)st.st_size) : -1.0;
    if (resident >= 0 && resident < CBK_COLD_RESIDENT_LIMIT)
        return 0;
    /* root in a container often cannot write /proc/sys: then what fadvise did stands, and the caller's
     * own residency check says whether the read is cold */
    if (geteuid() == 0 && drop_all_caches() == 0) {
        *used = "drop-caches";
        return 0;
    }
    return rc;
}

void cbk_label_read(struct cbk_phase *p, bool cold, bool warm, double resident, const char *method)
{
    cbk_phase_field(p, CBK_REAL("resident_fraction_before", resident));
    if (cold) {
        bool achieved = resident >= 0 && resident < CBK_COLD_RESIDENT_LIMIT;
        cbk_phase_field(p, CBK_TEXT("cold_method", method));
        cbk_phase_field(p, CBK_BOOL("cold_achieved", achieved));
        if (!achieved) {
            /* The figure itself, not a record field's name: no view shows that field. Static:
             * warnings are kept by pointer until the phase is emitted, and one read labels one phase. */
            static char not_cold[128];
            if (resident >= 0)
                snprintf(not_cold, sizeof not_cold, "cold read not achieved: %.0f%% of the data was still in "
                         "the page cache when the read began", resident * 100.0);
            else
                snprintf(not_cold, sizeof not_cold, "cold read not achieved: how much of the data was in the "
                         "page cache when the read began is not known");
            cbk_phase_warn(p, not_cold);
        }
    }
    if (warm)
        cbk_phase_warn(p, "warm read: served from the page cache as far as it held the data");
}
