/* Throughput: the sender calls send() with one message-size buffer until
 * the duration has passed, then shuts its side down; the receiver calls
 * recv() until end of stream. Each side counts bytes per interval
 * (default 1 s) from its own start signal; the reported rate is the
 * receiver's bytes over the receiver's time (start signal to end of
 * stream), so data still queued when the sender stops is counted when, and
 * only if, it arrives (iperf3 reports this figure as "receiver").
 *
 * Inside the loops: one send()/recv(), one clock read and one compare per
 * call; once per interval a store and (sender) a TCP_INFO read for the
 * retransmit count. No allocation, no output. */
#include "tcp.h"

#include "../core/timer.h"

#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fail(struct tcp_worker *w, const char *call, int err)
{
    /* EAGAIN: SO_SNDTIMEO/SO_RCVTIMEO; ETIMEDOUT: TCP_USER_TIMEOUT */
    if (err == EAGAIN || err == EWOULDBLOCK || err == ETIMEDOUT)
        snprintf(w->why, sizeof w->why, "data connection %u: %s made no progress for %g s (peer gone or link down?)",
                 w->index, call, w->cfg->timeout_s);
    else
        snprintf(w->why, sizeof w->why, "data connection %u: %s: %s", w->index, call, strerror(err));
    return -1;
}

/* Interval bookkeeping shared by both loops. */
struct ticks {
    double interval_s, tick, deadline, next;
    uint64_t mark, retrans_mark;
    uint32_t slot, slots;
};

static void ticks_init(struct ticks *t, const struct tcp_config *c, double start_s, bool stop_at_deadline)
{
    t->interval_s = c->interval_s;
    t->tick = start_s + c->interval_s;
    t->deadline = stop_at_deadline ? start_s + c->duration_s : 1e300;
    t->next = t->tick < t->deadline ? t->tick : t->deadline;
    t->mark = t->retrans_mark = 0;
    t->slot = 0;
    t->slots = tcp_interval_slots(c);
}

/* Closes every interval that ended by `now`. The last call moved `got`
 * of the `bytes` while it waited, from `since` (the call before it
 * returned) to `now`; when that wait crosses interval ends, each interval
 * gets the share of them that its part of the wait makes. A receiver asleep
 * for its batch on a slow path would otherwise put seconds of data into
 * the first interval and none into the next. */
static void ticks_close(struct ticks *t, struct tcp_side *s, double since, double now, uint64_t bytes, uint64_t got,
                        int fd)
{
    uint64_t retrans = 0, rtt;
    if (fd >= 0)
        tcp_info_counts(fd, &retrans, &rtt);
    while (now >= t->tick && t->slot < t->slots) {
        /* since < tick <= now: each earlier tick was closed by an earlier call */
        uint64_t upto = bytes - (uint64_t)((double)got * (now - t->tick) / (now - since) + 0.5);
        if (upto < t->mark)
            upto = t->mark;
        s->interval_bytes[t->slot] = upto - t->mark;
        s->interval_retrans[t->slot] = retrans - t->retrans_mark;
        t->mark = upto;
        t->retrans_mark = retrans;
        t->slot++;
        t->tick += t->interval_s;
    }
    if (now >= t->tick)  /* out of slots: later bytes go uncounted per interval */
        t->tick = 1e300;
    t->next = t->tick < t->deadline ? t->tick : t->deadline;
}

/* The last, partial interval. */
static void ticks_finish(struct ticks *t, struct tcp_side *s, uint64_t bytes, int fd)
{
    uint64_t retrans = 0, rtt;
    if (fd >= 0)
        tcp_info_counts(fd, &retrans, &rtt);
    if (bytes > t->mark && t->slot < t->slots) {
        s->interval_bytes[t->slot] = bytes - t->mark;
        s->interval_retrans[t->slot] = retrans - t->retrans_mark;
        t->slot++;
    }
    s->intervals = t->slot;
}

#ifdef SO_EE_ORIGIN_ZEROCOPY
/* MSG_ZEROCOPY completions arrive on the error queue as ranges of send
 * call numbers; *done is one past the highest completed. A completion
 * flagged COPIED means the kernel copied after all (loopback, devices
 * without scatter-gather). block: wait up to the timeout for one. */
static int reap_zerocopy(struct tcp_worker *w, bool block, uint32_t *done)
{
    for (;;) {
        char control[256];
        struct msghdr msg = { .msg_control = control, .msg_controllen = sizeof control };
        ssize_t r = recvmsg(w->fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                return fail(w, "recvmsg MSG_ERRQUEUE", errno);
            if (!block)
                return 0;
            struct pollfd p = { .fd = w->fd, .events = 0 };
            int n = poll(&p, 1, (int)(w->cfg->timeout_s * 1000));
            if (n == 0) {
                snprintf(w->why, sizeof w->why, "data connection %u: no MSG_ZEROCOPY completion within %g s",
                         w->index, w->cfg->timeout_s);
                return -1;
            }
            if (n < 0 && errno != EINTR)
                return fail(w, "poll", errno);
            block = false;
            continue;
        }
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
            if (!((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
                  (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR)))
                continue;
            struct sock_extended_err err;
            memcpy(&err, CMSG_DATA(cm), sizeof err);
            if (err.ee_origin != SO_EE_ORIGIN_ZEROCOPY)
                continue;
            if (err.ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
                w->side.zerocopy_copied = true;
            if (err.ee_data + 1 > *done)
                *done = err.ee_data + 1;
        }
    }
}
#define ZC_FLAG MSG_ZEROCOPY
#else
static int reap_zerocopy(struct tcp_worker *w, bool block, uint32_t *done)
{
    (void)w, (void)block, (void)done;
    return 0;
}
#define ZC_FLAG 0
#endif

/* After the last byte: tell the receiver, and wait until it has read
 * everything (it shuts down its side in turn), so the retransmit count
 * covers the whole transfer. */
static int confirm_end(struct tcp_worker *w)
{
    if (shutdown(w->fd, SHUT_WR))
        return fail(w, "shutdown", errno);
    char scrap[256];
    for (;;) {
        ssize_t r = recv(w->fd, scrap, sizeof scrap, 0);
        if (r == 0)
            return 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return fail(w, "waiting for the receiver to finish: recv", errno);
    }
}

int tcp_stream_send(struct tcp_worker *w, double start_s)
{
    const struct tcp_config *c = w->cfg;
    struct tcp_side *s = &w->side;
    const int flags = MSG_NOSIGNAL | (c->zerocopy ? ZC_FLAG : 0);
    uint32_t zc_sent = 0, zc_done = 0;
    uint64_t bytes = 0, calls = 0;
    struct ticks t;
    ticks_init(&t, c, start_s, true);
    double now = start_s;
    for (;;) {
        ssize_t n = send(w->fd, w->buf, w->buf_bytes, flags);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            /* ENOBUFS: too many zerocopy completions pending; collect them */
            if (c->zerocopy && errno == ENOBUFS) {
                if (reap_zerocopy(w, true, &zc_done))
                    return -1;
                continue;
            }
            return fail(w, "send", errno);
        }
        bytes += (uint64_t)n;
        calls++;
        if (c->zerocopy && ((++zc_sent & 15u) == 0) && reap_zerocopy(w, false, &zc_done))
            return -1;
        double since = now;
        now = cbk_clock();
        if (now < t.next)
            continue;
        if (now >= t.tick)
            ticks_close(&t, s, since, now, bytes, (uint64_t)n, w->fd);
        if (now >= t.deadline)
            break;
    }
    s->bytes = bytes;
    s->calls = calls;
    s->seconds = now - start_s;
    ticks_finish(&t, s, bytes, w->fd);
    if (confirm_end(w))
        return -1;
    while (c->zerocopy && zc_done < zc_sent)
        if (reap_zerocopy(w, true, &zc_done))
            return -1;
    tcp_info_counts(w->fd, &s->retransmits, &s->rtt_us);
    return 0;
}

int tcp_stream_receive(struct tcp_worker *w, double start_s)
{
    const struct tcp_config *c = w->cfg;
    struct tcp_side *s = &w->side;
    uint64_t bytes = 0, calls = 0;
    struct ticks t;
    ticks_init(&t, c, start_s, false);
    double now = start_s;
    for (;;) {
        ssize_t n = recv(w->fd, w->buf, w->buf_bytes, 0);
        if (n > 0) {
            bytes += (uint64_t)n;
            calls++;
            double since = now;
            now = cbk_clock();
            if (now >= t.next)
                ticks_close(&t, s, since, now, bytes, (uint64_t)n, -1);
            continue;
        }
        if (n == 0)
            break;
        if (errno == EINTR)
            continue;
        return fail(w, "recv", errno);
    }
    s->seconds = cbk_clock() - start_s;
    s->bytes = bytes;
    s->calls = calls;
    ticks_finish(&t, s, bytes, -1);
    /* lets the sender see that everything arrived */
    if (shutdown(w->fd, SHUT_WR) && errno != ENOTCONN)
        return fail(w, "shutdown", errno);
    return 0;
}
