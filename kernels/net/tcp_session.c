/* One test between a client and a server.
 *
 *   client                                server
 *   control connect    ------------------> accept
 *   HELLO (parameters) ------------------>
 *                      <------------------ ACCEPT (hostname, link speed) | REFUSE (why)
 *   N data connects, each with a 64-byte
 *   line "cbk-tcp <cookie> <index>"  ----> accept N, match cookie and index
 *                      <------------------ READY
 *   hook (MPI barrier / sleep until --start-at)  hook (MPI barrier)
 *   START; client receivers start timing ---> server receivers and senders start
 *                      <------------------ STARTED
 *   client senders start
 *   ... data threads run, senders stop after the duration ...
 *                      <------------------ RESULT (server's counts) | ERROR (why)
 *   DONE               ------------------>
 *
 * DONE matters: a killed client closes its sockets with a FIN the server
 * cannot tell from a normal end of stream; without DONE it would report
 * success.
 *
 * Every receiver starts its clock before its sender sends (iperf3 orders
 * its start the same way): a receiver that started late would count bytes
 * that arrived before its clock ran and overstate the rate; starting early
 * understates it by at most the one-way delay plus a wake-up, small against
 * the duration.
 *
 * Every wait is bounded by the timeout; a peer that disappears shows up as
 * a failed send/recv, a closed control connection or a timeout, and the
 * message says which. */
#include "tcp.h"

#include "../core/buffer.h"
#include "../core/pattern.h"
#include "../core/threads.h"
#include "../core/timer.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DATA_HELLO_BYTES 64

double tcp_realtime(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void gate_init(struct tcp_gate *g)
{
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    g->state = 0;
    g->start_s = 0;
}

static void gate_open(struct tcp_gate *g, int state)
{
    pthread_mutex_lock(&g->lock);
    g->state = state;
    g->start_s = cbk_clock();
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

static void gate_destroy(struct tcp_gate *g)
{
    pthread_cond_destroy(&g->cond);
    pthread_mutex_destroy(&g->lock);
}

static void *worker_main(void *arg)
{
    struct tcp_worker *w = arg;
    pthread_mutex_lock(&w->gate->lock);
    while (w->gate->state == 0)
        pthread_cond_wait(&w->gate->cond, &w->gate->lock);
    int state = w->gate->state;
    double start_s = w->gate->start_s;
    pthread_mutex_unlock(&w->gate->lock);
    if (state < 0)
        return NULL;
    int rc;
    if (w->cfg->test == TCP_TEST_RR)
        rc = w->client ? tcp_rr_client(w, start_s) : tcp_rr_server(w, start_s);
    else
        rc = w->sends ? tcp_stream_send(w, start_s) : tcp_stream_receive(w, start_s);
    /* after the transfer: autotuning may have grown them */
    tcp_buffer_sizes(w->fd, &w->side.sndbuf_bytes, &w->side.rcvbuf_bytes);
    if (rc)  /* wakes the peer's thread at once instead of after its timeout */
        shutdown(w->fd, SHUT_RDWR);
    return NULL;
}

/* The data connections of one side; receivers and senders have their own
 * gate (see the ordering above). */
struct crew {
    struct tcp_gate rx, tx;
    struct tcp_worker *w;
    uint32_t n;
    struct cbk_threads threads; /* one per data connection, w[k] the k-th's */
};

static void crew_open(struct crew *cr, bool receivers, bool senders, int state)
{
    if (receivers && cr->rx.state == 0)
        gate_open(&cr->rx, state);
    if (senders && cr->tx.state == 0)
        gate_open(&cr->tx, state);
}

static int crew_init(struct crew *cr, const struct tcp_config *cfg, bool client, char *why, size_t len)
{
    memset(cr, 0, sizeof *cr);
    gate_init(&cr->rx);
    gate_init(&cr->tx);
    cr->n = tcp_conns(cfg);
    cr->w = calloc(cr->n, sizeof *cr->w);
    if (!cr->w) {
        snprintf(why, len, "out of memory for %u data connections", cr->n);
        return -1;
    }
    for (uint32_t k = 0; k < cr->n; k++) {
        struct tcp_worker *w = &cr->w[k];
        w->fd = -1;
        w->index = k;
        w->client = client;
        w->sends = client == tcp_client_sends(cfg, k);
        w->cfg = cfg;
        w->gate = w->sends ? &cr->tx : &cr->rx;
    }
    return 0;
}

/* Buffers, counters and threads; the threads wait at the gate. */
static int crew_start(struct crew *cr, uint64_t seed, char *why, size_t len)
{
    for (uint32_t k = 0; k < cr->n; k++) {
        struct tcp_worker *w = &cr->w[k];
        const struct tcp_config *c = w->cfg;
        size_t bytes = c->test == TCP_TEST_RR
                           ? (size_t)(c->request_bytes > c->response_bytes ? c->request_bytes : c->response_bytes)
                           : (size_t)c->message_bytes;
        if (c->test == TCP_TEST_STREAM && !w->sends && c->receive_batch_bytes > bytes)
            bytes = (size_t)c->receive_batch_bytes;  /* one recv() takes what one wake-up found */
        w->buf = cbk_buffer_alloc(bytes);
        if (!w->buf || tcp_side_alloc(&w->side, tcp_interval_slots(c)) ||
            (c->test == TCP_TEST_RR && w->client &&
             cbk_histogram_init(&w->latency, TCP_HIST_LOW_NS, TCP_HIST_HIGH_NS))) {
            snprintf(why, len, "out of memory for the buffers of %u data connections", cr->n);
            return -1;
        }
        w->buf_bytes = bytes;
        /* Random payload: a compressing link (VPN, WAN optimiser) must not
         * flatter the figure. */
        struct cbk_pattern p;
        if (cbk_pattern_init(&p, seed, k, CBK_PATTERN_UNIT) == 0) {
            for (size_t off = 0; off < bytes; off += CBK_PATTERN_UNIT)
                memcpy(w->buf + off, p.pool, bytes - off < CBK_PATTERN_UNIT ? bytes - off : CBK_PATTERN_UNIT);
            cbk_pattern_free(&p);
        }
    }
    int rc = cbk_threads_start(&cr->threads, (int)cr->n, worker_main, cr->w, sizeof *cr->w);
    if (rc) {
        snprintf(why, len, "cannot start a thread for data connection %d: %s", cr->threads.started, strerror(rc));
        return -1;
    }
    return 0;
}

static void crew_join(struct crew *cr) { cbk_threads_join(&cr->threads); }

/* First failed connection, or NULL. */
static const char *crew_error(const struct crew *cr)
{
    for (uint32_t k = 0; k < cr->n; k++)
        if (cr->w[k].why[0])
            return cr->w[k].why;
    return NULL;
}

/* Stops and frees everything; threads still running are woken by shutting
 * their sockets down. Keeps the side counts when `keep` is given. */
static void crew_free(struct crew *cr, struct tcp_side *keep, struct cbk_histogram *latency)
{
    if (!cr->w) {
        gate_destroy(&cr->rx);
        gate_destroy(&cr->tx);
        return;
    }
    crew_open(cr, true, true, -1);
    for (uint32_t k = 0; k < cr->n; k++)
        if ((int)k < cr->threads.started && cr->w[k].fd >= 0)
            shutdown(cr->w[k].fd, SHUT_RDWR);
    crew_join(cr);
    for (uint32_t k = 0; k < cr->n; k++) {
        struct tcp_worker *w = &cr->w[k];
        if (w->fd >= 0)
            close(w->fd);
        cbk_buffer_free(w->buf);
        if (keep) {
            keep[k] = w->side;
        } else {
            tcp_side_free(&w->side);
        }
        if (latency && w->latency.counts)
            cbk_histogram_merge(latency, &w->latency);
        cbk_histogram_free(&w->latency);
    }
    free(cr->w);
    cr->w = NULL;
    gate_destroy(&cr->rx);
    gate_destroy(&cr->tx);
}

static int run_hook(const struct tcp_hook *hook, char *why, size_t len)
{
    return hook && hook->before_start ? hook->before_start(hook->arg, why, len) : 0;
}

static void hostname(char *out, size_t len)
{
    if (gethostname(out, len))
        snprintf(out, len, "unknown");
    out[len - 1] = '\0';
}

/* ------------------------------------------------------------ client */

int tcp_client_session(const struct tcp_config *cfg_in, const char *host, int port, const char *bind,
                       const struct tcp_hook *hook, struct tcp_result *r, char *why, size_t len)
{
    memset(r, 0, sizeof *r);
    r->cfg = *cfg_in;
    const struct tcp_config *cfg = &r->cfg;
    r->conns = tcp_conns(cfg);
    r->client_link_gbit = r->server_link_gbit = -1;
    struct tcp_msg m = { 0 };
    struct crew cr;
    int rc = -1, ctl = -1;
    char tmp[TCP_WHY];
    if (crew_init(&cr, cfg, true, why, len))
        goto out;

    ctl = tcp_connect(host, port, bind, 0, 0, cfg->timeout_s, why, len);
    if (ctl < 0)
        goto out;
    tcp_control_options(ctl);
    tcp_peer_name(ctl, r->peer, sizeof r->peer);
    r->client_link_gbit = tcp_link_speed_gbit(ctl, r->ifname, sizeof r->ifname);

    char me[TCP_HOST_LEN];
    hostname(me, sizeof me);
    tcp_msg_begin(&m, "HELLO");
    tcp_config_to_msg(&m, cfg);
    tcp_msg_text(&m, "client_host", me);
    if (tcp_msg_send(ctl, &m, cfg->timeout_s, why, len) ||
        tcp_msg_recv(ctl, &m, cfg->timeout_s, "waiting for the server to accept the test", why, len))
        goto out;
    if (!tcp_msg_is(&m, "ACCEPT")) {
        char reason[TCP_WHY] = "no reason given";
        tcp_msg_get_text(&m, "why", reason, sizeof reason);
        snprintf(why, len, "the server at %s refused the test: %s", r->peer, reason);
        goto out;
    }
    tcp_msg_get_text(&m, "host", r->server_host, sizeof r->server_host);
    tcp_msg_get_real(&m, "link_gbit", &r->server_link_gbit);

    for (uint32_t k = 0; k < cr.n; k++) {
        struct tcp_worker *w = &cr.w[k];
        w->fd = tcp_connect(host, port, bind, cfg->sndbuf_bytes, cfg->rcvbuf_bytes, cfg->timeout_s, tmp, sizeof tmp);
        if (w->fd < 0) {
            snprintf(why, len, "data connection %u: %s", k, tmp);
            goto out;
        }
        char hello[DATA_HELLO_BYTES];
        memset(hello, ' ', sizeof hello);
        int n = snprintf(hello, sizeof hello, "cbk-tcp %" PRIu64 " %u", cfg->cookie, k);
        hello[n] = ' ';
        hello[sizeof hello - 1] = '\n';
        if (tcp_data_options(w->fd, cfg, w->sends, why, len) ||
            tcp_write_full(w->fd, hello, sizeof hello, cfg->timeout_s, "sending a data connection's greeting", why, len))
            goto out;
    }
    if (tcp_msg_recv(ctl, &m, cfg->timeout_s, "waiting for the server to accept the data connections", why, len))
        goto out;
    if (!tcp_msg_is(&m, "READY")) {
        char reason[TCP_WHY] = "no reason given";
        tcp_msg_get_text(&m, "why", reason, sizeof reason);
        snprintf(why, len, "the server at %s failed before the start: %s", r->peer, reason);
        goto out;
    }
    if (crew_start(&cr, cfg->cookie, why, len) || run_hook(hook, why, len))
        goto out;

    tcp_msg_begin(&m, "START");
    if (tcp_msg_send(ctl, &m, cfg->timeout_s, why, len))
        goto out;
    crew_open(&cr, true, false, 1);
    r->start_s = cr.rx.start_s;
    r->start_realtime = tcp_realtime();
    if (tcp_msg_recv(ctl, &m, cfg->timeout_s, "waiting for the server to start", why, len))
        goto out;
    if (!tcp_msg_is(&m, "STARTED")) {
        snprintf(why, len, "the server at %s sent an unexpected message instead of STARTED", r->peer);
        goto out;
    }
    crew_open(&cr, false, true, 1);
    crew_join(&cr);

    const char *local_err = crew_error(&cr);
    /* After a local failure the server's word only refines the message: a
     * live server answers at once, so do not add a whole timeout for a dead
     * one. */
    double result_wait = local_err && cfg->timeout_s > 0.5 ? 0.5 : cfg->timeout_s;
    int got = tcp_msg_recv(ctl, &m, result_wait, "waiting for the server's counts", tmp, sizeof tmp);
    if (got == 0 && tcp_msg_is(&m, "ERROR")) {
        char reason[TCP_WHY] = "no reason given";
        tcp_msg_get_text(&m, "why", reason, sizeof reason);
        snprintf(why, len, "the server at %s failed during the test: %s", r->peer, reason);
        goto out;
    }
    if (got) {
        /* a dead server usually shows first as a data error; name both */
        if (local_err)
            snprintf(why, len, "lost the server at %s during the test: %s (control connection: %s)", r->peer,
                     local_err, tmp);
        else
            snprintf(why, len, "lost the server at %s during the test: %s", r->peer, tmp);
        goto out;
    }
    if (local_err) {
        snprintf(why, len, "%s", local_err);
        goto out;
    }
    if (!tcp_msg_is(&m, "RESULT")) {
        snprintf(why, len, "the server at %s sent an unexpected message instead of its counts", r->peer);
        goto out;
    }
    if (tcp_sides_from_msg(&m, r->remote, r->conns, tcp_interval_slots(cfg), why, len))
        goto out;
    tcp_msg_begin(&m, "DONE");
    if (tcp_msg_send(ctl, &m, cfg->timeout_s, why, len))
        goto out;
    rc = 0;
out:
    if (ctl >= 0)
        close(ctl);
    if (rc == 0 && cfg->test == TCP_TEST_RR &&
        cbk_histogram_init(&r->latency, TCP_HIST_LOW_NS, TCP_HIST_HIGH_NS)) {
        snprintf(why, len, "out of memory for the latency histogram");
        rc = -1;
    }
    crew_free(&cr, rc == 0 ? r->local : NULL, rc == 0 && r->latency.counts ? &r->latency : NULL);
    tcp_msg_free(&m);
    return rc;
}

void tcp_result_free(struct tcp_result *r)
{
    for (uint32_t k = 0; k < TCP_MAX_CONNS; k++) {
        tcp_side_free(&r->local[k]);
        tcp_side_free(&r->remote[k]);
    }
    cbk_histogram_free(&r->latency);
}

/* ------------------------------------------------------------ server */

static void refuse(int ctl, const char *type, const char *reason, double timeout_s)
{
    struct tcp_msg m = { 0 };
    char ignored[TCP_WHY];
    tcp_msg_begin(&m, type);
    tcp_msg_text(&m, "why", reason);
    tcp_msg_send(ctl, &m, timeout_s, ignored, sizeof ignored);
    tcp_msg_free(&m);
}

/* Accepts the session's data connections; strangers (wrong cookie, no
 * greeting) are closed and do not count. */
static int accept_data(struct tcp_listener *l, struct crew *cr, const struct tcp_config *cfg, char *why, size_t len)
{
    double deadline = cbk_clock() + cfg->timeout_s;
    uint32_t have = 0;
    while (have < cr->n) {
        double left = deadline - cbk_clock();
        char tmp[TCP_WHY];
        int fd = left > 0 ? tcp_accept(l, left, tmp, sizeof tmp) : -1;
        if (fd < 0) {
            snprintf(why, len, "only %u of %u data connections arrived within %g s", have, cr->n, cfg->timeout_s);
            return -1;
        }
        char hello[DATA_HELLO_BYTES + 1];
        uint64_t cookie = 0;
        unsigned index = UINT_MAX;
        if (tcp_read_full(fd, hello, DATA_HELLO_BYTES, left, "data greeting", tmp, sizeof tmp) == 0) {
            hello[DATA_HELLO_BYTES] = '\0';
            if (sscanf(hello, "cbk-tcp %" SCNu64 " %u", &cookie, &index) != 2)
                index = UINT_MAX;
        }
        if (cookie != cfg->cookie || index >= cr->n || cr->w[index].fd >= 0) {
            close(fd);
            continue;
        }
        cr->w[index].fd = fd;
        if (tcp_data_options(fd, cfg, cr->w[index].sends, why, len))
            return -1;
        have++;
    }
    return 0;
}

int tcp_server_session(struct tcp_listener *l, double first_wait_s, double timeout_s, const struct tcp_hook *hook,
                       struct tcp_config *cfg, char *why, size_t len)
{
    struct tcp_msg m = { 0 };
    struct crew cr = { .w = NULL };
    int ctl = -1, rc = -1;
    char tmp[TCP_WHY];
    double wait_until = first_wait_s > 0 ? cbk_clock() + first_wait_s : 0;
    gate_init(&cr.rx);
    gate_init(&cr.tx);

    /* A connection that is not a cbk client of this version is refused
     * and the server keeps waiting for the real one. */
    for (;;) {
        double left = wait_until > 0 ? wait_until - cbk_clock() : 0;
        if (wait_until > 0 && left <= 0) {
            snprintf(why, len, "no client started a test on port %d within %g s", l->port, first_wait_s);
            goto out;
        }
        ctl = tcp_accept(l, wait_until > 0 ? left : 0, why, len);
        if (ctl < 0)
            goto out;
        tcp_control_options(ctl);
        if (m.text)
            m.text[0] = '\0';
        if (tcp_msg_recv(ctl, &m, timeout_s, "waiting for the client's HELLO", tmp, sizeof tmp) == 0 &&
            tcp_msg_is(&m, "HELLO") && tcp_config_from_msg(&m, cfg, tmp, sizeof tmp) == 0)
            break;
        if (tcp_msg_is(&m, "HELLO"))
            refuse(ctl, "REFUSE", tmp, timeout_s);
        close(ctl);
        ctl = -1;
    }
    if (tcp_listener_buffers(l, cfg->sndbuf_bytes, cfg->rcvbuf_bytes, why, len)) {
        refuse(ctl, "REFUSE", why, cfg->timeout_s);
        goto out;
    }
    gate_destroy(&cr.rx);
    gate_destroy(&cr.tx);
    if (crew_init(&cr, cfg, false, why, len)) {
        refuse(ctl, "REFUSE", why, cfg->timeout_s);
        goto out;
    }
    char me[TCP_HOST_LEN];
    hostname(me, sizeof me);
    tcp_msg_begin(&m, "ACCEPT");
    tcp_msg_text(&m, "host", me);
    tcp_msg_real(&m, "link_gbit", tcp_link_speed_gbit(ctl, NULL, 0));
    if (tcp_msg_send(ctl, &m, cfg->timeout_s, why, len))
        goto out;
    if (accept_data(l, &cr, cfg, why, len) || crew_start(&cr, cfg->cookie ^ 0x5eedull, why, len)) {
        refuse(ctl, "ERROR", why, cfg->timeout_s);
        goto out;
    }
    tcp_msg_begin(&m, "READY");
    if (tcp_msg_send(ctl, &m, cfg->timeout_s, why, len) || run_hook(hook, why, len))
        goto out;
    /* START comes at once, or at the client's --start-at */
    double start_wait = cfg->timeout_s;
    if (cfg->start_at > 0 && cfg->start_at - tcp_realtime() > 0)
        start_wait += cfg->start_at - tcp_realtime();
    if (tcp_msg_recv(ctl, &m, start_wait, "waiting for the client's START", why, len))
        goto out;
    if (!tcp_msg_is(&m, "START")) {
        snprintf(why, len, "the client sent an unexpected message instead of START");
        goto out;
    }
    crew_open(&cr, true, true, 1);
    tcp_msg_begin(&m, "STARTED");
    if (tcp_msg_send(ctl, &m, cfg->timeout_s, why, len))
        goto out;
    crew_join(&cr);
    const char *err = crew_error(&cr);
    if (err) {
        snprintf(why, len, "%s", err);
        refuse(ctl, "ERROR", err, cfg->timeout_s);
        goto out;
    }
    tcp_msg_begin(&m, "RESULT");
    tcp_sides_to_msg(&m, cr.w, cr.n);
    if (tcp_msg_send(ctl, &m, cfg->timeout_s, why, len))
        goto out;
    if (tcp_msg_recv(ctl, &m, cfg->timeout_s, "waiting for the client to confirm the end of the test", tmp, sizeof tmp) ||
        !tcp_msg_is(&m, "DONE")) {
        snprintf(why, len, "the client went away during the test (%s)", tmp);
        goto out;
    }
    rc = 0;
out:
    if (ctl >= 0)
        close(ctl);
    crew_free(&cr, NULL, NULL);
    tcp_msg_free(&m);
    return rc;
}
