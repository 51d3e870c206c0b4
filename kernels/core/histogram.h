/* A log-bucketed histogram of non-negative integers (latencies in ns, sizes
 * in bytes), in the manner of HdrHistogram: values below 128 each have a
 * bucket; above, every power of two is split into 128 linear sub-buckets, so
 * a reported value is within 0.8 % of the recorded one whatever its
 * magnitude. Recording is O(1) without allocation, fit for a timed loop;
 * memory is fixed at init (about 32 KiB for a 1 ns .. 100 s range). */
#ifndef CBK_HISTOGRAM_H
#define CBK_HISTOGRAM_H

#include <stdint.h>

struct cbk_histogram {
    uint64_t lowest, highest;    /* range given to init; values outside are clamped */
    uint64_t count, clamped;     /* values recorded; how many were clamped */
    uint64_t min_seen, max_seen; /* exact extremes (after clamping) */
    double sum;                  /* for the mean */
    uint32_t buckets;
    uint64_t *counts;
};

/* 0, or -EINVAL (lowest > highest) / -ENOMEM. */
int cbk_histogram_init(struct cbk_histogram *h, uint64_t lowest, uint64_t highest);
void cbk_histogram_free(struct cbk_histogram *h);
void cbk_histogram_reset(struct cbk_histogram *h);

static inline uint32_t cbk_histogram_index(uint64_t v)
{
    if (v < 128)
        return (uint32_t)v;
    unsigned shift = (unsigned)(63 - __builtin_clzll(v)) - 7;
    return 128u * (shift + 1) + (uint32_t)((v >> shift) & 127u);
}

static inline void cbk_histogram_record(struct cbk_histogram *h, uint64_t v)
{
    if (v < h->lowest || v > h->highest) {
        v = v < h->lowest ? h->lowest : h->highest;
        h->clamped++;
    }
    h->counts[cbk_histogram_index(v)]++;
    h->count++;
    h->sum += (double)v;
    if (v < h->min_seen)
        h->min_seen = v;
    if (v > h->max_seen)
        h->max_seen = v;
}

static inline uint64_t cbk_histogram_count(const struct cbk_histogram *h) { return h->count; }

/* The value at percentile q (0..100; 50 = median): the smallest bucket
 * holding at least q % of the values, as that bucket's midpoint clipped to
 * the exact minimum and maximum seen. 0 for an empty histogram. */
uint64_t cbk_histogram_percentile(const struct cbk_histogram *h, double q);
uint64_t cbk_histogram_min(const struct cbk_histogram *h);
uint64_t cbk_histogram_max(const struct cbk_histogram *h);
double cbk_histogram_mean(const struct cbk_histogram *h);

/* Adds src's values to dst; both must have been made with the same range.
 * Returns 0 or -EINVAL. */
int cbk_histogram_merge(struct cbk_histogram *dst, const struct cbk_histogram *src);

#endif
