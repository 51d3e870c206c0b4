/* Page-cache control for honest reads. A "cold" read must come from the
 * device: with root we drop the kernel's caches as administrators do
 * (echo 3 > /proc/sys/vm/drop_caches, after a sync); without root we ask
 * the kernel to forget the file's pages (fdatasync, then
 * posix_fadvise(POSIX_FADV_DONTNEED)). Either way we then count the
 * file's resident pages with mincore() and report the fraction, so a
 * read that was not cold says so instead of pretending. */
#ifndef CBK_PAGECACHE_H
#define CBK_PAGECACHE_H

#include "cbk.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a cold read empties the cache; the choice names below are in this
 * order, so a choice parameter binds straight to the enum. */
enum cbk_cold_method { CBK_COLD_AUTO, CBK_COLD_DROP_CACHES, CBK_COLD_FADVISE, CBK_COLD_NONE };
extern const char *const cbk_cold_method_names[];  /* auto, drop-caches, fadvise */
extern const char *const cbk_cold_or_none_names[]; /* the same and none (leave the cache) */

/* Fraction (0..1) of the file's pages in the page cache; negative when it
 * cannot be told (e.g. mmap refused). */
double cbk_resident_fraction(int fd, uint64_t file_bytes);

/* Combines two fractions into the worst: the larger, or unknown (negative)
 * when either is unknown, so a file that cannot be told never passes as cold. */
double cbk_resident_worst(double a, double b);

/* Empties the cache of fd's file by `method` (not CBK_COLD_NONE). Writes
 * the method used to *used. Returns 0 or -errno of the step that failed. */
int cbk_make_cold(int fd, enum cbk_cold_method method, const char **used);

/* Refuses (-1, with why) a cold read by drop-caches that this process may
 * not do: /proc/sys/vm/drop_caches is writable by root only, and not by
 * root either where /proc/sys is mounted read-only (a container). Checked
 * before anything is measured: found at the read, it failed the run after
 * the write had been timed. option: the parameter's name, for the message. */
int cbk_check_cold_method(enum cbk_cold_method method, const char *option, char *why, size_t len);

/* The fraction above which a read is not counted as cold. */
#define CBK_COLD_RESIDENT_LIMIT 0.01

/* The one labelling of a read phase by the state of the cache it started
 * from: resident_fraction_before (-1: unknown), and for a cold read
 * cold_method, cold_achieved and a warning when it was not achieved; for a
 * warm read a warning. */
void cbk_label_read(struct cbk_phase *p, bool cold, bool warm, double resident, const char *method);

#endif
