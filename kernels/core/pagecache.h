/* Page-cache control for honest reads. A "cold" read must come from the
 * device: with root we drop the kernel's caches as administrators do
 * (echo 3 > /proc/sys/vm/drop_caches, after a sync); without root we ask
 * the kernel to forget the file's pages (fdatasync, then
 * posix_fadvise(POSIX_FADV_DONTNEED)). Either way we then count the
 * file's resident pages with mincore() and report the fraction, so a
 * read that was not cold says so instead of pretending. */
#ifndef CBK_PAGECACHE_H
#define CBK_PAGECACHE_H

#include <stdint.h>

/* Fraction (0..1) of the file's pages in the page cache; negative when it
 * cannot be told (e.g. mmap refused). */
double cbk_resident_fraction(int fd, uint64_t file_bytes);

/* `method`: "auto", "drop-caches" or "fadvise". Writes the method used to
 * *used. Returns 0 or -errno of the step that failed. */
int cbk_make_cold(int fd, const char *method, const char **used);

/* The fraction above which a read is not counted as cold. */
#define CBK_COLD_RESIDENT_LIMIT 0.01

#endif
