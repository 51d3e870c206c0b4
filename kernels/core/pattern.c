#include "pattern.h"

#include "buffer.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

struct unit_header {
    uint64_t magic, run_id, offset, rank;
};

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int cbk_pattern_init(struct cbk_pattern *p, uint64_t run_id, uint32_t rank, size_t block_bytes)
{
    return cbk_pattern_init_pages(p, run_id, rank, block_bytes, false);
}

int cbk_pattern_init_pages(struct cbk_pattern *p, uint64_t run_id, uint32_t rank, size_t block_bytes, bool huge)
{
    p->run_id = run_id;
    p->rank = rank;
    p->block_bytes = block_bytes;
    p->pool_huge_bytes = 0;
    p->pool = cbk_buffer_alloc_pages(block_bytes, huge, &p->pool_huge_bytes);
    if (!p->pool)
        return -1;
    /* xoshiro256** seeded through splitmix64, as its authors advise */
    uint64_t seed = run_id ^ ((uint64_t)rank << 32), s[4];
    for (int i = 0; i < 4; i++)
        s[i] = splitmix64(&seed);
    size_t words = block_bytes / 8;
    uint64_t *w = (uint64_t *)p->pool;
    for (size_t i = 0; i < words; i++) {
        w[i] = rotl(s[1] * 5, 7) * 9;
        uint64_t t = s[1] << 17;
        s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
        s[2] ^= t; s[3] = rotl(s[3], 45);
    }
    for (size_t i = words * 8; i < block_bytes; i++)
        p->pool[i] = (unsigned char)splitmix64(&seed);
    return 0;
}

void cbk_pattern_free(struct cbk_pattern *p)
{
    cbk_buffer_free(p->pool);
    p->pool = NULL;
}

static size_t header_len(size_t room)
{
    return room < sizeof(struct unit_header) ? room : sizeof(struct unit_header);
}

void cbk_pattern_fill(const struct cbk_pattern *p, unsigned char *buf, uint64_t offset)
{
    if (buf != p->pool)
        memcpy(buf, p->pool, p->block_bytes);
    for (size_t u = 0; u < p->block_bytes; u += CBK_PATTERN_UNIT) {
        struct unit_header h = { CBK_PATTERN_MAGIC, p->run_id, offset + u, p->rank };
        memcpy(buf + u, &h, header_len(p->block_bytes - u));
    }
}

bool cbk_pattern_check(const struct cbk_pattern *p, const unsigned char *buf, size_t len,
                       uint64_t offset, uint64_t *bad_offset)
{
    for (size_t u = 0; u < len; u += CBK_PATTERN_UNIT) {
        struct unit_header h = { CBK_PATTERN_MAGIC, p->run_id, offset + u, p->rank };
        size_t unit = len - u < CBK_PATTERN_UNIT ? len - u : CBK_PATTERN_UNIT;
        size_t hl = header_len(unit);
        const unsigned char *expect_h = (const unsigned char *)&h;
        if (!memcmp(buf + u, expect_h, hl) && !memcmp(buf + u + hl, p->pool + u + hl, unit - hl))
            continue;
        for (size_t i = 0; i < unit; i++) {
            unsigned char want = i < hl ? expect_h[i] : p->pool[u + i];
            if (buf[u + i] != want) {
                *bad_offset = offset + u + i;
                return false;
            }
        }
    }
    return true;
}

uint64_t cbk_random_u64(void)
{
    uint64_t v;
    if (getrandom(&v, sizeof v, 0) == (ssize_t)sizeof v)
        return v;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    uint64_t s = (uint64_t)t.tv_nsec ^ ((uint64_t)getpid() << 32);
    return splitmix64(&s);
}
