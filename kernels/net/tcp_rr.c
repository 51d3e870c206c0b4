/* Request/response (netperf TCP_RR): the client writes a request of
 * request-size bytes and waits for the whole response of response-size
 * bytes before the next request, one transaction in flight per
 * connection. Each transaction's time (first byte of the request handed to
 * the kernel .. last byte of the response read) goes into a log-bucketed
 * histogram; transactions per second = transactions / time from the start
 * signal to the end of the last transaction. Latency = 1 / rate only with
 * one connection; percentiles come from the histogram either way. No
 * request starts after --duration, but the one in flight finishes: a
 * transaction longer than the duration runs past it (tcp_report.c warns).
 * A side's bytes are both directions' (request + response per transaction),
 * as the measurement record's.
 *
 * Inside the loop: the send()/recv() calls, two clock reads, one histogram
 * increment. No allocation, no output. */
#include "tcp.h"

#include "../core/timer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int fail(struct tcp_worker *w, const char *call, int err)
{
    /* EAGAIN: SO_SNDTIMEO/SO_RCVTIMEO; ETIMEDOUT: TCP_USER_TIMEOUT */
    if (err == EAGAIN || err == EWOULDBLOCK || err == ETIMEDOUT)
        snprintf(w->why, sizeof w->why, "data connection %u: %s made no progress for %g s (peer gone or link down?)",
                 w->index, call, w->cfg->timeout_s);
    else if (err == 0)
        snprintf(w->why, sizeof w->why, "data connection %u: %s: the peer closed the connection mid-transaction",
                 w->index, call);
    else
        snprintf(w->why, sizeof w->why, "data connection %u: %s: %s", w->index, call, strerror(err));
    return -1;
}

/* 1 whole message moved, 0 end of stream before its first byte, -1 error
 * (errno set; 0 for end of stream mid-message). */
static int send_all(int fd, const unsigned char *buf, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t r = send(fd, buf + done, n - done, MSG_NOSIGNAL);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        done += (size_t)r;
    }
    return 1;
}

static int recv_all(int fd, unsigned char *buf, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t r = recv(fd, buf + done, n - done, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0) {
            errno = 0;
            return done ? -1 : 0;
        }
        done += (size_t)r;
    }
    return 1;
}

/* Per-interval transaction counts. */
static void close_intervals(struct tcp_side *s, const struct tcp_config *c, uint64_t start_ns, uint64_t now_ns_,
                            uint64_t *tick_ns, uint64_t *mark, uint64_t count)
{
    uint32_t slots = tcp_interval_slots(c);
    while (now_ns_ >= *tick_ns && s->intervals < slots) {
        s->interval_bytes[s->intervals++] = count - *mark;
        *mark = count;
        *tick_ns = start_ns + (uint64_t)((double)(s->intervals + 1) * c->interval_s * 1e9);
    }
    if (now_ns_ >= *tick_ns)
        *tick_ns = UINT64_MAX;
}

int tcp_rr_client(struct tcp_worker *w, double start_s)
{
    const struct tcp_config *c = w->cfg;
    struct tcp_side *s = &w->side;
    /* start_s is a cbk_clock() reading: the same clock in ns */
    uint64_t start_ns = (uint64_t)(start_s * 1e9);
    uint64_t deadline_ns = start_ns + (uint64_t)(c->duration_s * 1e9);
    uint64_t tick_ns = start_ns + (uint64_t)(c->interval_s * 1e9), mark = 0, count = 0;
    uint64_t t1 = now_ns();
    /* one transaction at least, as the stream side sends once at least: a client that came to its
     * loop past the deadline (a 10 ms --duration on a loaded node) stored a rate of 0 transactions/s,
     * a figure of nothing measured, not a slow link */
    do {
        uint64_t t0 = t1;
        if (send_all(w->fd, w->buf, c->request_bytes) < 0)
            return fail(w, "send request", errno);
        int r = recv_all(w->fd, w->buf, c->response_bytes);
        if (r <= 0)
            return fail(w, "recv response", r == 0 ? 0 : errno);
        t1 = now_ns();
        cbk_histogram_record(&w->latency, t1 - t0);
        count++;
        if (t1 >= tick_ns)
            close_intervals(s, c, start_ns, t1, &tick_ns, &mark, count);
    } while (t1 < deadline_ns);
    s->seconds = (double)(t1 - start_ns) * 1e-9;
    s->calls = count;
    s->bytes = count * (c->request_bytes + c->response_bytes);
    if (count > mark && s->intervals < tcp_interval_slots(c))
        s->interval_bytes[s->intervals++] = count - mark;
    if (shutdown(w->fd, SHUT_WR))
        return fail(w, "shutdown", errno);
    /* the server answers our end of stream with its own */
    int r = recv_all(w->fd, w->buf, 1);
    if (r != 0)
        return r < 0 ? fail(w, "waiting for the server to finish", errno)
                     : fail(w, "waiting for the server to finish: unexpected data", EPROTO);
    tcp_info_counts(w->fd, &s->retransmits, &s->rtt_us);
    return 0;
}

int tcp_rr_server(struct tcp_worker *w, double start_s)
{
    const struct tcp_config *c = w->cfg;
    struct tcp_side *s = &w->side;
    uint64_t start_ns = (uint64_t)(start_s * 1e9);
    uint64_t tick_ns = start_ns + (uint64_t)(c->interval_s * 1e9), mark = 0, count = 0;
    for (;;) {
        int r = recv_all(w->fd, w->buf, c->request_bytes);
        if (r == 0)
            break;
        if (r < 0)
            return fail(w, "recv request", errno);
        if (send_all(w->fd, w->buf, c->response_bytes) < 0)
            return fail(w, "send response", errno);
        count++;
        uint64_t t = now_ns();
        if (t >= tick_ns)
            close_intervals(s, c, start_ns, t, &tick_ns, &mark, count);
    }
    s->seconds = cbk_clock() - start_s;
    s->calls = count;
    s->bytes = count * (c->request_bytes + c->response_bytes);
    if (count > mark && s->intervals < tcp_interval_slots(c))
        s->interval_bytes[s->intervals++] = count - mark;
    if (shutdown(w->fd, SHUT_WR) && errno != ENOTCONN)
        return fail(w, "shutdown", errno);
    tcp_info_counts(w->fd, &s->retransmits, &s->rtt_us);
    return 0;
}
