#include "pario_layout.h"

#include <stdio.h>

void pario_layout_init(struct pario_layout *l, bool shared, int ranks, uint64_t block, uint64_t transfer,
                       int64_t segments, int64_t pieces, bool random_order, uint64_t seed, bool multi_file)
{
    l->shared = shared;
    l->ranks = ranks;
    l->block = block;
    l->transfer = transfer;
    l->segments = segments;
    l->pieces = pieces;
    l->chunk = block / (uint64_t)pieces;
    l->ops = block / transfer * (uint64_t)segments;
    l->random_order = random_order;
    l->order_bits = 0;
    while (l->order_bits < 64 && (l->ops - 1) >> l->order_bits)
        l->order_bits++;
    l->seed = seed;
    l->multi_file = multi_file;
}

/* One round of a bijection on the integers below 2^bits (mask = 2^bits - 1):
 * adding a key, multiplying by an odd number and xor-shifting right each
 * map that range onto itself one to one, and their mix moves every bit. */
static uint64_t scramble(uint64_t x, uint64_t key, unsigned bits, uint64_t mask)
{
    for (int round = 0; round < 4; round++) {
        key = key * 0x9e3779b97f4a7c15ull + 0xbf58476d1ce4e5b9ull;
        x = ((x + key) * 0x94d049bb133111ebull) & mask;
        x ^= x >> (bits / 2 + 1);
    }
    return x;
}

/* Position i of writer w's order under IOR -z: a permutation of 0..ops-1
 * computed on the spot, keyed by the run and the writer, so readers and the
 * io-master recompute any rank's order and no rank keeps a table of its
 * offsets (io500's ior-hard moves 10 million transfers per rank: two tables
 * were 160 MB a rank, 20 GB on a 128-rank node). The bijection runs on the
 * next power of two and walks on until it lands below ops ("cycle walking":
 * under two steps on average, since that power is less than 2 x ops). */
static uint64_t permuted(const struct pario_layout *l, int w, uint64_t i)
{
    unsigned bits = l->order_bits;
    uint64_t mask = bits == 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
    uint64_t key = l->seed ^ ((uint64_t)w * 0x2545f4914f6cdd1dull);
    do
        i = scramble(i, key, bits, mask);
    while (i >= l->ops);
    return i;
}

/* Transfer i of a rank lies in segment i / (block/transfer), piece
 * (i mod ...) / (chunk/transfer). Shared file: segment base + piece * ranks
 * * chunk + w * chunk (IOR's segmented layout when there is one piece).
 * Own file: i * transfer. */
uint64_t pario_layout_offset(const struct pario_layout *l, int w, uint64_t i)
{
    if (l->random_order && l->ops > 1)
        i = permuted(l, w, i);
    if (!l->shared)
        return i * l->transfer;
    uint64_t per_seg = l->block / l->transfer, per_piece = l->chunk / l->transfer, n = (uint64_t)l->ranks;
    uint64_t seg = i / per_seg, rem = i % per_seg, piece = rem / per_piece, j = rem % per_piece;
    return seg * n * l->block + piece * n * l->chunk + (uint64_t)w * l->chunk + j * l->transfer;
}

uint64_t pario_layout_file_bytes(const struct pario_layout *l)
{
    return l->block * (uint64_t)l->segments * (l->shared ? (uint64_t)l->ranks : 1);
}

/* IOR's names: "data", "data.<rank>"; with multi-file (-m) ".<repetition>" after. */
void pario_layout_file_name(const struct pario_layout *l, const char *dir, int w, int repetition, char *out,
                            size_t len)
{
    int n = l->shared ? snprintf(out, len, "%s/data", dir) : snprintf(out, len, "%s/data.%08d", dir, w);
    if (l->multi_file && n > 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, ".%d", repetition);
}
