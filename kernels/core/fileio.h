/* File I/O shared by the I/O kernels: checking a target directory before
 * anything is created, and the block loops that move a file's bytes. */
#ifndef CBK_FILEIO_H
#define CBK_FILEIO_H

#include "cbk.h"
#include "pattern.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The cache and durability modes of the I/O kernels' write and read
 * phases (the record's `mode`); the names are in enum order, so choice
 * parameters bind to the enums. */
enum cbk_write_mode { CBK_WRITE_FSYNC, CBK_WRITE_BUFFERED, CBK_WRITE_DIRECT };
enum cbk_read_mode { CBK_READ_COLD, CBK_READ_WARM, CBK_READ_DIRECT, CBK_READ_NONE };
extern const char *const cbk_write_mode_names[]; /* fsync, buffered, direct */
extern const char *const cbk_read_mode_names[];  /* cold, warm, direct, none */

/* The exit status an I/O error during a run deserves: a failed measurement,
 * ENOSPC and EDQUOT included (a run too large for the free space is refused
 * as bad input before it starts, by the space check in validate, cbk_check_target_dir). */
int cbk_io_status(int err);

/* E1: a buffered write "finishes" when the page cache has it; the sync
 * after it is the rest of the truth. Reports `p` twice, both labelled:
 * mode buffered until `written_end_s` (with a warning), and mode
 * buffered+sync until `synced_end_s`; both carry sync_seconds. */
void cbk_report_buffered_write(struct cbk_ctx *c, const struct cbk_phase *p, double written_end_s,
                               double synced_end_s, double sync_s);

/* Checks that `dir` exists, is a directory on a writable file system that
 * holds files (not /proc, /sys, a cgroup: named by their statfs type) and
 * has room for `ranks` x `rank_bytes`: the ranks that write there at once
 * (each rank's own files: the ranks on its node, c->node_size, which share
 * its file system; a shared file: every rank). A file system that reports
 * no size (ramfs, tmpfs with size=0) has no room to check. Returns 0, or a
 * line in `why`. */
int cbk_check_target_dir(const char *dir, uint64_t rank_bytes, int ranks, char *why, size_t why_len);

/* cbk_check_target_dir for `ranks` x `files` files of `file_bytes` each,
 * every file rounded up to whole blocks of the file system: 10^6 files of
 * 100 bytes take 3.8 GiB of 4 KiB blocks, not the 95 MiB their bytes add
 * up to. Returns 0, or a line in `why`. */
int cbk_check_target_files(const char *dir, uint64_t file_bytes, uint64_t files, int ranks, char *why,
                           size_t why_len);

/* Checks that the file system of `dir` has free inodes for `ranks` x
 * `rank_inodes` files and directories; a file system that does not count
 * them (f_files 0: btrfs, some network ones) passes. Returns 0, or a line
 * in `why`. */
int cbk_check_target_inodes(const char *dir, uint64_t rank_inodes, int ranks, char *why, size_t why_len);

/* Checks the block/file size pair every I/O kernel takes. `direct`: the
 * block must suit O_DIRECT (a multiple of 512 bytes). */
int cbk_check_block_sizes(uint64_t file_bytes, uint64_t block_bytes, bool direct,
                          char *why, size_t why_len);

/* Writes `file_bytes` to `fd` in blocks from `pat` (its pool is the write
 * buffer); `logical_base` is added to each block's offset in the stamped
 * header, so different files of one run never hold equal blocks.
 * Returns 0 or -errno. */
int cbk_write_blocks(int fd, struct cbk_pattern *pat, uint64_t file_bytes, uint64_t logical_base);

/* Reads `file_bytes` in blocks into `buf`; with `pat`, checks every block
 * and stops at the first bad byte (*bad_offset, return 1). Returns 0,
 * 1 on a verify failure, or -errno. */
int cbk_read_blocks(int fd, unsigned char *buf, size_t block_bytes, uint64_t file_bytes,
                    const struct cbk_pattern *pat, uint64_t logical_base, uint64_t *bad_offset);

/* Test hook: when the environment variable CBK_TEST_CORRUPT_OFFSET holds
 * an offset inside the file, flips the byte there (between write and
 * read), so tests can prove --verify catches corruption. */
int cbk_test_corrupt(const char *path, uint64_t file_bytes);

/* The transfer buffer's pages, on a phase's record: huge_pages as asked
 * (--huge-pages) and buffer_huge_bytes, how much of the buffer the kernel
 * backed with huge pages (cbk_buffer_alloc_huge). */
void cbk_phase_buffer_pages(struct cbk_phase *p, bool huge_asked, size_t huge_bytes);

#endif
