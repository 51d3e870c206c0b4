/* The control protocol's messages: a 4-byte big-endian length, then text
 * "TYPE\nkey=value\n...". Text keeps the protocol free of byte order and
 * struct layout (client and server may be different builds and machines)
 * and readable in a packet capture. Messages are few and outside the timed
 * loops, so parsing cost does not matter. */
#include "tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSG_MAX_BYTES (64u << 20)

static void put(struct tcp_msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct tcp_msg *m, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = m->cap - m->len;
        int n = m->text ? vsnprintf(m->text + m->len, room, fmt, ap) : -1;
        va_end(ap);
        if (n >= 0 && (size_t)n < room) {
            m->len += (size_t)n;
            return;
        }
        size_t cap = m->cap ? 2 * m->cap : 4096;
        while (n >= 0 && cap - m->len <= (size_t)n)
            cap *= 2;
        char *t = realloc(m->text, cap);
        if (!t) {
            /* out of memory: the message goes out truncated and the peer
             * reports the missing key */
            return;
        }
        m->text = t;
        m->cap = cap;
    }
}

void tcp_msg_begin(struct tcp_msg *m, const char *type)
{
    m->len = 0;
    if (m->text)
        m->text[0] = '\0';
    put(m, "%s\n", type);
}

void tcp_msg_u64(struct tcp_msg *m, const char *key, uint64_t v) { put(m, "%s=%" PRIu64 "\n", key, v); }
void tcp_msg_real(struct tcp_msg *m, const char *key, double v) { put(m, "%s=%.17g\n", key, v); }

void tcp_msg_text(struct tcp_msg *m, const char *key, const char *v)
{
    /* values are single-line: newlines would end the value early */
    put(m, "%s=", key);
    for (const char *p = v ? v : ""; *p; p++)
        put(m, "%c", *p == '\n' ? ' ' : *p);
    put(m, "\n");
}

void tcp_msg_free(struct tcp_msg *m)
{
    free(m->text);
    memset(m, 0, sizeof *m);
}

int tcp_msg_send(int fd, struct tcp_msg *m, double timeout_s, char *why, size_t len)
{
    /* One write for length and text: two small writes would meet Nagle's
     * algorithm and the peer's delayed ACK (40 ms each way on Linux). */
    uint32_t n = htonl((uint32_t)m->len);
    char *frame = malloc(m->len + sizeof n);
    if (!frame) {
        snprintf(why, len, "out of memory for a %zu-byte control message", m->len);
        return -1;
    }
    memcpy(frame, &n, sizeof n);
    memcpy(frame + sizeof n, m->text, m->len);
    int rc = tcp_write_full(fd, frame, m->len + sizeof n, timeout_s, "sending a control message", why, len);
    free(frame);
    return rc;
}

int tcp_msg_recv(int fd, struct tcp_msg *m, double timeout_s, const char *waiting_for, char *why, size_t len)
{
    unsigned char head[4];
    if (tcp_read_full(fd, head, sizeof head, timeout_s, waiting_for, why, len))
        return -1;
    uint32_t n = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 | (uint32_t)head[2] << 8 | head[3];
    if (n == 0 || n > MSG_MAX_BYTES) {
        /* usually another service on that port: show what it said */
        bool text = true;
        for (int i = 0; i < 4; i++)
            text &= head[i] >= 0x20 && head[i] < 0x7f;
        snprintf(why, len, "%s: the peer does not speak the cbk tcp protocol (it sent %s%.4s%s)", waiting_for,
                 text ? "text starting \"" : "a malformed message", text ? (const char *)head : "", text ? "\"" : "");
        return -1;
    }
    if (m->cap < (size_t)n + 1) {
        char *t = realloc(m->text, (size_t)n + 1);
        if (!t) {
            snprintf(why, len, "%s: out of memory for a %u-byte message", waiting_for, n);
            return -1;
        }
        m->text = t;
        m->cap = (size_t)n + 1;
    }
    if (tcp_read_full(fd, m->text, n, timeout_s, waiting_for, why, len))
        return -1;
    m->text[n] = '\0';
    m->len = n;
    return 0;
}

bool tcp_msg_is(const struct tcp_msg *m, const char *type)
{
    size_t n = strlen(type);
    return m->text && !strncmp(m->text, type, n) && m->text[n] == '\n';
}

/* Start of the value of `key`, or NULL. */
static const char *find(const struct tcp_msg *m, const char *key)
{
    size_t n = strlen(key);
    for (const char *line = m->text ? strchr(m->text, '\n') : NULL; line; line = strchr(line, '\n')) {
        line++;
        if (!strncmp(line, key, n) && line[n] == '=')
            return line + n + 1;
    }
    return NULL;
}

int tcp_msg_get_u64(const struct tcp_msg *m, const char *key, uint64_t *v)
{
    const char *s = find(m, key);
    char *end;
    if (!s)
        return -1;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || end == s || (*end && *end != '\n'))
        return -1;
    *v = x;
    return 0;
}

int tcp_msg_get_real(const struct tcp_msg *m, const char *key, double *v)
{
    const char *s = find(m, key);
    char *end;
    if (!s)
        return -1;
    double x = strtod(s, &end);
    if (end == s || (*end && *end != '\n') || !isfinite(x))
        return -1;
    *v = x;
    return 0;
}

int tcp_msg_get_text(const struct tcp_msg *m, const char *key, char *out, size_t len)
{
    const char *s = find(m, key);
    if (!s)
        return -1;
    size_t n = strcspn(s, "\n");
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), s);
    return 0;
}

/* Comma-separated unsigned numbers into out[0..max); returns the count. */
static uint32_t get_u64_list(const struct tcp_msg *m, const char *key, uint64_t *out, uint32_t max)
{
    const char *s = find(m, key);
    uint32_t n = 0;
    while (s && *s && *s != '\n' && n < max) {
        char *end;
        out[n++] = strtoull(s, &end, 10);
        if (end == s)
            break;
        s = *end == ',' ? end + 1 : NULL;
    }
    return n;
}

static void put_u64_list(struct tcp_msg *m, const char *key, const uint64_t *v, uint32_t n)
{
    put(m, "%s=", key);
    for (uint32_t i = 0; i < n; i++)
        put(m, "%s%" PRIu64, i ? "," : "", v[i]);
    put(m, "\n");
}

void tcp_config_to_msg(struct tcp_msg *m, const struct tcp_config *c)
{
    tcp_msg_u64(m, "protocol", TCP_PROTOCOL);
    tcp_msg_u64(m, "test", (uint64_t)c->test);
    tcp_msg_u64(m, "direction", (uint64_t)c->dir);
    tcp_msg_u64(m, "streams", c->streams);
    tcp_msg_u64(m, "message_bytes", c->message_bytes);
    tcp_msg_u64(m, "receive_batch_bytes", c->receive_batch_bytes);
    tcp_msg_u64(m, "request_bytes", c->request_bytes);
    tcp_msg_u64(m, "response_bytes", c->response_bytes);
    tcp_msg_u64(m, "sndbuf_bytes", c->sndbuf_bytes);
    tcp_msg_u64(m, "rcvbuf_bytes", c->rcvbuf_bytes);
    tcp_msg_real(m, "duration_s", c->duration_s);
    tcp_msg_real(m, "interval_s", c->interval_s);
    tcp_msg_real(m, "timeout_s", c->timeout_s);
    tcp_msg_real(m, "start_at", c->start_at);
    tcp_msg_u64(m, "nodelay", c->nodelay);
    tcp_msg_u64(m, "zerocopy", c->zerocopy);
    tcp_msg_u64(m, "cookie", c->cookie);
    tcp_msg_u64(m, "repetition", (uint64_t)c->repetition);
    tcp_msg_u64(m, "repetitions", (uint64_t)c->repetitions);
}

int tcp_config_from_msg(const struct tcp_msg *m, struct tcp_config *c, char *why, size_t len)
{
    uint64_t protocol = 0, test, dir, streams, nodelay, zerocopy, rep, reps;
    if (tcp_msg_get_u64(m, "protocol", &protocol) || protocol != TCP_PROTOCOL) {
        snprintf(why, len, "the client speaks control protocol %llu, this server %d: use the same cbk version on both",
                 (unsigned long long)protocol, TCP_PROTOCOL);
        return -1;
    }
    if (tcp_msg_get_u64(m, "test", &test) || tcp_msg_get_u64(m, "direction", &dir) ||
        tcp_msg_get_u64(m, "streams", &streams) || tcp_msg_get_u64(m, "message_bytes", &c->message_bytes) ||
        tcp_msg_get_u64(m, "receive_batch_bytes", &c->receive_batch_bytes) ||
        tcp_msg_get_u64(m, "request_bytes", &c->request_bytes) ||
        tcp_msg_get_u64(m, "response_bytes", &c->response_bytes) ||
        tcp_msg_get_u64(m, "sndbuf_bytes", &c->sndbuf_bytes) || tcp_msg_get_u64(m, "rcvbuf_bytes", &c->rcvbuf_bytes) ||
        tcp_msg_get_real(m, "duration_s", &c->duration_s) || tcp_msg_get_real(m, "interval_s", &c->interval_s) ||
        tcp_msg_get_real(m, "timeout_s", &c->timeout_s) || tcp_msg_get_real(m, "start_at", &c->start_at) ||
        tcp_msg_get_u64(m, "nodelay", &nodelay) || tcp_msg_get_u64(m, "zerocopy", &zerocopy) ||
        tcp_msg_get_u64(m, "cookie", &c->cookie) || tcp_msg_get_u64(m, "repetition", &rep) ||
        tcp_msg_get_u64(m, "repetitions", &reps)) {
        snprintf(why, len, "the client's HELLO lacks a parameter: not a cbk tcp client of this version?");
        return -1;
    }
    /* The server trusts nothing it allocates for: the same bounds as the
     * parameter table. */
    if (test > TCP_TEST_RR || dir > TCP_DIR_BIDIR || streams < 1 || streams > TCP_MAX_STREAMS ||
        c->message_bytes < 1 || c->message_bytes > (1u << 30) || c->receive_batch_bytes > TCP_MAX_RECEIVE_BATCH || c->request_bytes < 1 ||
        c->request_bytes > (1u << 30) || c->response_bytes < 1 || c->response_bytes > (1u << 30) ||
        !(c->duration_s > 0) || c->duration_s > 86400 || !(c->interval_s > 0) ||
        c->duration_s / c->interval_s > 1e6 || !(c->timeout_s > 0) || c->timeout_s > 86400 || reps < 1 ||
        rep >= reps) {
        snprintf(why, len, "the client's HELLO has a parameter out of range");
        return -1;
    }
    c->test = (enum tcp_test)test;
    c->dir = (enum tcp_dir)dir;
    c->streams = (uint32_t)streams;
    c->nodelay = nodelay != 0;
    c->zerocopy = zerocopy != 0;
    c->repetition = (int32_t)rep;
    c->repetitions = (int32_t)reps;
    return 0;
}

void tcp_sides_to_msg(struct tcp_msg *m, const struct tcp_worker *w, uint32_t n)
{
    char key[64];
    tcp_msg_u64(m, "conns", n);
    for (uint32_t k = 0; k < n; k++) {
        const struct tcp_side *s = &w[k].side;
#define KEY(name) (snprintf(key, sizeof key, "c%u." name, k), key)
        tcp_msg_u64(m, KEY("bytes"), s->bytes);
        tcp_msg_u64(m, KEY("calls"), s->calls);
        tcp_msg_real(m, KEY("seconds"), s->seconds);
        tcp_msg_u64(m, KEY("retransmits"), s->retransmits);
        tcp_msg_u64(m, KEY("rtt_us"), s->rtt_us);
        tcp_msg_u64(m, KEY("sndbuf"), s->sndbuf_bytes);
        tcp_msg_u64(m, KEY("rcvbuf"), s->rcvbuf_bytes);
        tcp_msg_u64(m, KEY("zc_copied"), s->zerocopy_copied);
        put_u64_list(m, KEY("ivb"), s->interval_bytes, s->intervals);
        put_u64_list(m, KEY("ivr"), s->interval_retrans, s->intervals);
#undef KEY
    }
}

int tcp_sides_from_msg(const struct tcp_msg *m, struct tcp_side *s, uint32_t n, uint32_t slots, char *why, size_t len)
{
    char key[64];
    uint64_t conns = 0, copied = 0;
    if (tcp_msg_get_u64(m, "conns", &conns) || conns != n) {
        snprintf(why, len, "the server's RESULT covers %llu data connections, expected %u",
                 (unsigned long long)conns, n);
        return -1;
    }
    for (uint32_t k = 0; k < n; k++) {
        struct tcp_side *t = &s[k];
#define KEY(name) (snprintf(key, sizeof key, "c%u." name, k), key)
        if (tcp_side_alloc(t, slots)) {
            snprintf(why, len, "out of memory for the server's interval counts");
            return -1;
        }
        if (tcp_msg_get_u64(m, KEY("bytes"), &t->bytes) || tcp_msg_get_u64(m, KEY("calls"), &t->calls) ||
            tcp_msg_get_real(m, KEY("seconds"), &t->seconds) ||
            tcp_msg_get_u64(m, KEY("retransmits"), &t->retransmits) ||
            tcp_msg_get_u64(m, KEY("rtt_us"), &t->rtt_us) || tcp_msg_get_u64(m, KEY("sndbuf"), &t->sndbuf_bytes) ||
            tcp_msg_get_u64(m, KEY("rcvbuf"), &t->rcvbuf_bytes) || tcp_msg_get_u64(m, KEY("zc_copied"), &copied)) {
            snprintf(why, len, "the server's RESULT lacks the counts of data connection %u", k);
            return -1;
        }
        t->zerocopy_copied = copied != 0;
        t->intervals = get_u64_list(m, KEY("ivb"), t->interval_bytes, slots);
        get_u64_list(m, KEY("ivr"), t->interval_retrans, slots);
#undef KEY
    }
    return 0;
}

int tcp_side_alloc(struct tcp_side *s, uint32_t slots)
{
    memset(s, 0, sizeof *s);
    s->interval_bytes = calloc(slots, sizeof *s->interval_bytes);
    s->interval_retrans = calloc(slots, sizeof *s->interval_retrans);
    if (!s->interval_bytes || !s->interval_retrans) {
        tcp_side_free(s);
        return -1;
    }
    return 0;
}

void tcp_side_free(struct tcp_side *s)
{
    free(s->interval_bytes);
    free(s->interval_retrans);
    s->interval_bytes = s->interval_retrans = NULL;
}
