#include "histogram.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int cbk_histogram_init(struct cbk_histogram *h, uint64_t lowest, uint64_t highest)
{
    memset(h, 0, sizeof *h);
    if (lowest > highest)
        return -EINVAL;
    h->lowest = lowest;
    h->highest = highest;
    h->buckets = cbk_histogram_index(highest) + 1;
    h->counts = calloc(h->buckets, sizeof *h->counts);
    if (!h->counts)
        return -ENOMEM;
    cbk_histogram_reset(h);
    return 0;
}

void cbk_histogram_free(struct cbk_histogram *h)
{
    free(h->counts);
    h->counts = NULL;
}

void cbk_histogram_reset(struct cbk_histogram *h)
{
    if (h->counts)
        memset(h->counts, 0, h->buckets * sizeof *h->counts);
    h->count = h->clamped = 0;
    h->sum = 0;
    h->min_seen = UINT64_MAX;
    h->max_seen = 0;
}

/* Smallest value and width of bucket i (inverse of cbk_histogram_index). */
static void bucket_range(uint32_t i, uint64_t *low, uint64_t *width)
{
    if (i < 128) {
        *low = i;
        *width = 1;
        return;
    }
    unsigned shift = i / 128 - 1;
    *low = (uint64_t)(128 + i % 128) << shift;
    *width = (uint64_t)1 << shift;
}

uint64_t cbk_histogram_min(const struct cbk_histogram *h) { return h->count ? h->min_seen : 0; }
uint64_t cbk_histogram_max(const struct cbk_histogram *h) { return h->count ? h->max_seen : 0; }
double cbk_histogram_mean(const struct cbk_histogram *h) { return h->count ? h->sum / (double)h->count : 0.0; }

uint64_t cbk_histogram_percentile(const struct cbk_histogram *h, double q)
{
    if (!h->count)
        return 0;
    if (q <= 0)
        return h->min_seen;
    if (q >= 100)
        return h->max_seen;
    /* nearest-rank definition: the value below which q % of the values lie */
    uint64_t rank = (uint64_t)ceil(q / 100.0 * (double)h->count);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < h->buckets; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t low, width;
            bucket_range(i, &low, &width);
            uint64_t v = low + (width - 1) / 2;
            if (v < h->min_seen)
                v = h->min_seen;
            if (v > h->max_seen)
                v = h->max_seen;
            return v;
        }
    }
    return h->max_seen;
}

int cbk_histogram_merge(struct cbk_histogram *dst, const struct cbk_histogram *src)
{
    if (dst->buckets != src->buckets || dst->lowest != src->lowest || dst->highest != src->highest)
        return -EINVAL;
    for (uint32_t i = 0; i < dst->buckets; i++)
        dst->counts[i] += src->counts[i];
    dst->count += src->count;
    dst->clamped += src->clamped;
    dst->sum += src->sum;
    if (src->count) {
        if (src->min_seen < dst->min_seen)
            dst->min_seen = src->min_seen;
        if (src->max_seen > dst->max_seen)
            dst->max_seen = src->max_seen;
    }
    return 0;
}
