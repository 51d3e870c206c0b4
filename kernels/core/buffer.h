/* Page-aligned buffers, as O_DIRECT requires. */
#ifndef CBK_BUFFER_H
#define CBK_BUFFER_H

#include <stddef.h>

#define CBK_ALIGN_BYTES 4096

/* Returns NULL on failure; the caller reports it. Memory is touched so the
 * first timed pass does not pay for page faults. */
void *cbk_buffer_alloc(size_t bytes);
void cbk_buffer_free(void *p);

/* MemAvailable of /proc/meminfo in KiB (what can be allocated without
 * swapping), for defaults and checks that must fit memory; -1 unknown. */
long cbk_mem_available_kib(void);

#endif
