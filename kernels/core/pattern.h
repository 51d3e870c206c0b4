/* The data every I/O kernel writes. A pool of pseudo-random bytes
 * (xoshiro256**, seeded by the run id) is made once; each 4 KiB unit of a
 * block is the pool's bytes with a 32-byte header stamped in front: magic,
 * run id, file offset of the unit, writer rank. Random bytes defeat
 * compression; the offset in every unit means no two units of a run are
 * equal, so deduplication finds nothing; the header lets a read check
 * every unit and name the first bad offset. Stamping costs 32 bytes per
 * 4 KiB, so the write loop is not slowed by generating data. */
#ifndef CBK_PATTERN_H
#define CBK_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CBK_PATTERN_UNIT 4096u
#define CBK_PATTERN_MAGIC 0x63626b2d64617461ull /* "cbk-data" */

struct cbk_pattern {
    uint64_t run_id;
    uint32_t rank;
    size_t block_bytes;
    unsigned char *pool; /* block_bytes of random data, page aligned */
    size_t pool_huge_bytes; /* how much of pool huge pages back (cbk_buffer_alloc_huge) */
};

int cbk_pattern_init(struct cbk_pattern *p, uint64_t run_id, uint32_t rank, size_t block_bytes);
/* The same, its pool on transparent huge pages when `huge` (a transfer buffer: cbk_buffer_alloc_huge). */
int cbk_pattern_init_pages(struct cbk_pattern *p, uint64_t run_id, uint32_t rank, size_t block_bytes, bool huge);
void cbk_pattern_free(struct cbk_pattern *p);

/* Fills `buf` (block_bytes long) with the block that belongs at `offset`. */
void cbk_pattern_fill(const struct cbk_pattern *p, unsigned char *buf, uint64_t offset);

/* Checks a block read from `offset`, `len` bytes of it. Returns true when
 * intact, else false with *bad_offset set to the first wrong byte's file
 * offset. */
bool cbk_pattern_check(const struct cbk_pattern *p, const unsigned char *buf, size_t len,
                       uint64_t offset, uint64_t *bad_offset);

/* A 64-bit random number from the OS, for run ids and seeds. */
uint64_t cbk_random_u64(void);

#endif
