/* Page-aligned buffers, as O_DIRECT requires. */
#ifndef CBK_BUFFER_H
#define CBK_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CBK_ALIGN_BYTES 4096

/* Returns NULL on failure; the caller reports it. Memory is touched so the
 * first timed pass does not pay for page faults. */
void *cbk_buffer_alloc(size_t bytes);

/* cbk_buffer_alloc's buffer, laid out for transparent huge pages: aligned to
 * and a whole number of the kernel's huge page size, madvise(MADV_HUGEPAGE)
 * before it is touched. An O_DIRECT transfer from it pins a few huge pages
 * instead of one page per 4 KiB and reaches the block layer in fewer
 * segments (docs/kernels/pario.md, "Transfer buffers on huge pages").
 * *huge_bytes: how much of it the kernel did back with huge pages (0 where
 * THP is "never", not built in, or none was free); small pages where a huge
 * page would be larger than the buffer rounded to 2 MiB. Freed with
 * cbk_buffer_free. */
void *cbk_buffer_alloc_huge(size_t bytes, size_t *huge_bytes);
/* A transfer buffer as asked (--huge-pages): cbk_buffer_alloc_huge's, or
 * one kept on 4 KiB pages (madvise(MADV_NOHUGEPAGE): where THP is "always"
 * the kernel would back a large buffer with huge pages unasked), so
 * *huge_bytes is true either way. */
void *cbk_buffer_alloc_pages(size_t bytes, bool huge, size_t *huge_bytes);
void cbk_buffer_free(void *p);

/* What can be allocated without swapping or the OOM killer, in KiB, for
 * defaults and checks that must fit memory: MemAvailable of /proc/meminfo,
 * or this process's memory cgroup headroom where that is smaller (a Slurm
 * job's, a container's, --memory-limit's); -1 unknown. */
long cbk_mem_available_kib(void);
/* " under this process's memory cgroup limit" when the cgroup is what
 * cbk_mem_available_kib gave, else "": for the refusals' messages. */
const char *cbk_mem_available_note(void);

/* Refuses buffers that would not fit this node's memory: `ranks` (those on
 * the node) x `rank_bytes` above 90 % of MemAvailable. cbk_buffer_alloc
 * touches what it allocates, so an overcommitted request meets the OOM
 * killer, not a NULL. `what` names the parameters whose product rank_bytes
 * is. Returns 0, or a line in `why`. */
int cbk_check_memory(const char *what, uint64_t rank_bytes, int ranks, char *why, size_t why_len);

#endif
