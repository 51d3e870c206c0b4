#include "pagecache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

static int drop_all_caches(void)
{
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
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

int cbk_make_cold(int fd, enum cbk_cold_method method, const char **used)
{
    bool want_drop = method == CBK_COLD_DROP_CACHES || (method == CBK_COLD_AUTO && geteuid() == 0);
    if (want_drop) {
        int rc = drop_all_caches();
        if (rc == 0 || method != CBK_COLD_AUTO) {
            *used = "drop-caches";
            return rc;
        }
        /* root in a container often cannot write /proc/sys: fall back */
    }
    *used = "fadvise";
    return forget_file(fd);
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
