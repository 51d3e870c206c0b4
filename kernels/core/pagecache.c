#include "pagecache.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

int cbk_make_cold(int fd, const char *method, const char **used)
{
    bool want_drop = !strcmp(method, "drop-caches") || (!strcmp(method, "auto") && geteuid() == 0);
    if (want_drop) {
        int rc = drop_all_caches();
        if (rc == 0 || strcmp(method, "auto")) {
            *used = "drop-caches";
            return rc;
        }
        /* root in a container often cannot write /proc/sys: fall back */
    }
    *used = "fadvise";
    return forget_file(fd);
}
