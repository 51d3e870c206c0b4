#include "buffer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *cbk_buffer_alloc(size_t bytes)
{
    void *p = NULL;
    size_t rounded = (bytes + CBK_ALIGN_BYTES - 1) / CBK_ALIGN_BYTES * CBK_ALIGN_BYTES;
    if (rounded == 0 || posix_memalign(&p, CBK_ALIGN_BYTES, rounded))
        return NULL;
    memset(p, 0, rounded);
    return p;
}

void cbk_buffer_free(void *p) { free(p); }

long cbk_mem_available_kib(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long kib = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}
