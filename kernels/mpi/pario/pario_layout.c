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
    l->seed = seed;
    l->multi_file = multi_file;
}

/* A small generator for the random offset order, seeded per writer so
 * readers and the io-master recompute any rank's order. */
static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Transfer i of a rank lies in segment i / (block/transfer), piece
 * (i mod ...) / (chunk/transfer). Shared file: segment base + piece * ranks
 * * chunk + w * chunk (IOR's segmented layout when there is one piece).
 * Own file: i * transfer. */
void pario_layout_offsets(const struct pario_layout *l, int w, uint64_t *out)
{
    uint64_t per_seg = l->block / l->transfer, per_piece = l->chunk / l->transfer, n = (uint64_t)l->ranks;
    for (uint64_t i = 0; i < l->ops; i++) {
        uint64_t seg = i / per_seg, rem = i % per_seg, piece = rem / per_piece, j = rem % per_piece;
        out[i] = l->shared ? seg * n * l->block + piece * n * l->chunk + (uint64_t)w * l->chunk + j * l->transfer
                           : i * l->transfer;
    }
    if (l->random_order) {
        uint64_t seed = l->seed ^ ((uint64_t)w * 0x2545f4914f6cdd1dull);
        for (uint64_t i = l->ops - 1; i > 0; i--) {
            uint64_t k = next_random(&seed) % (i + 1), t = out[i];
            out[i] = out[k];
            out[k] = t;
        }
    }
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
