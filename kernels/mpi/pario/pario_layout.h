/* Where pario's data lies: the offsets each rank moves and in which order
 * (IOR's segmented layout, E8's strided one, IOR -z's random order), and
 * the files' names. The kernel (pario.c) decides the numbers from its
 * parameters; this is the arithmetic every rank repeats for any writer, so
 * a reader and the io-master find the data where its writer put it. */
#ifndef PARIO_LAYOUT_H
#define PARIO_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pario_layout {
    bool shared;           /* one file for all ranks; else one per rank */
    int ranks;
    uint64_t block;        /* bytes per rank per segment (IOR -b) */
    uint64_t transfer;     /* bytes per I/O call (IOR -t) */
    int64_t segments;      /* IOR -s */
    int64_t pieces;        /* strided: interleaved pieces of a block; 1 = contiguous */
    uint64_t chunk;        /* block / pieces */
    uint64_t ops;          /* transfers per rank */
    bool random_order;     /* each rank's transfers in a permutation (IOR -z) */
    unsigned order_bits;   /* of the power of two the permutation runs on: ops - 1 fits in it */
    uint64_t seed;         /* of the permutations: the run's id, the same on every rank */
    bool multi_file;       /* names carry the repetition (IOR -m) */
};

/* Fills `l` and its derived counts (chunk, ops); the caller has checked
 * that transfer divides block / pieces. */
void pario_layout_init(struct pario_layout *l, bool shared, int ranks, uint64_t block, uint64_t transfer,
                       int64_t segments, int64_t pieces, bool random_order, uint64_t seed, bool multi_file);

/* The offset of writer w's transfer i (0 .. l->ops - 1), in the order it
 * moves them: computed each time, never tabled. */
uint64_t pario_layout_offset(const struct pario_layout *l, int w, uint64_t i);

/* Bytes in one file: the shared file holds every rank's blocks. */
uint64_t pario_layout_file_bytes(const struct pario_layout *l);

/* The file writer w writes in `dir` for `repetition`, as IOR names them. */
void pario_layout_file_name(const struct pario_layout *l, const char *dir, int w, int repetition, char *out,
                            size_t len);

#endif
