/* linkmatrix: bandwidth and latency of every ordered pair of ranks (one
 * rank per node: every link of the cluster), measured as mpiGraph does.
 *
 * N-1 shift rounds: in round k every rank sends to rank+k and receives
 * from rank-k at the same time, so every rank's injection and ejection
 * port carries exactly one stream in each round and a slow port or cable
 * shows on the links that touch it, not spread over all of them. A round
 * is `iterations` x `window` messages of `size` bytes each way, each
 * direction kept `window` messages deep independently of the other; the
 * receiver times every window's arrival (the link src -> dst, seen where
 * the bytes land). Latency uses
 * the same pattern with `latency-size` messages, one at a time
 * (MPI_Sendrecv): each exchange is one message crossing every link at
 * once, timed at the receiver. Barrier between rounds, so no round's tail
 * loads the next. Every pair is one measurement record, rank 0 writes them
 * all: qualifiers src_host and dst_host name the link.
 *
 * --pattern=one-pair measures the same links one at a time (src sends,
 * dst receives, every other rank waits), as a check of the shift pattern:
 * a link slower in the shift rounds than alone is one that shares
 * something (a switch's backplane, a trunk) with the others.
 *
 * Where the MPI library carries the links over TCP, every link also has a
 * `link_retransmits` record: the share of the bytes its sender sent that
 * TCP sent again during the rounds (tcp_retransmits.h), a lossy link's
 * mark when its bandwidth and latency hide the loss, and the data segments
 * its receiver got twice (D-SACKs), a link that duplicates packets.
 *
 * Every wait of the rounds and barriers is patient (patient_wait.h): a
 * rank whose link is slow, or that waits for its turn, sleeps after 1 ms
 * instead of spinning, so on a test cluster whose hosts share cores the
 * waiting ranks leave the CPU to those that move bytes; and one that has
 * waited past CBK_WAIT_NOTE_S says on which peer, so a link matrix ended
 * at its time limit names the node that stopped. The latency exchanges
 * are the exception: each is timed alone, and a patient wait (polls, then
 * sleeps) would be timed with it, so they keep MPI_Sendrecv and a stall
 * watch (patient_wait.h), a thread that says, past the same bound, which
 * shift's exchanges the rank is stuck in and with which two peers. */
#include "../core/cbk.h"
#include "../core/patient_wait.h"
#include "tcp_retransmits.h"
#include "../core/test_stop.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum pattern { PATTERN_SHIFT, PATTERN_ONE_PAIR };
static const char *const pattern_names[] = { "shift", "one-pair", NULL };

struct linkmatrix_options {
    int pattern;
    uint64_t size;
    int64_t window;
    int64_t iterations;
    uint64_t latency_size;
    int64_t latency_iterations;
    bool latency;
};
#define OPT struct linkmatrix_options
static const OPT *opt(const struct cbk_args *a) { return cbk_options(a); }

static const struct cbk_param params[] = {
    { .name = "pattern", CBK_AT_CHOICE(OPT, pattern, pattern_names), .default_value = "shift",
      .help = "shift = mpiGraph's N-1 rounds, every link loaded at once in each; one-pair = every ordered pair "
              "alone, the other ranks idle (N(N-1) rounds: a check of the shift pattern)" },
    { .name = "size", CBK_AT_SIZE(OPT, size), .default_value = "1m", .unit = "bytes", .min = "1", .max = "1g",
      .help = "bytes of each bandwidth message" },
    { .name = "window", CBK_AT_INT(OPT, window), .default_value = "4", .unit = "count", .min = "1", .max = "1024",
      .help = "messages in flight on each link per exchange (mpiGraph's window)" },
    { .name = "iterations", CBK_AT_INT(OPT, iterations), .default_value = "10", .unit = "count", .min = "1",
      .max = "1000000", .help = "windows of messages per link per shift round (the figure: all their bytes over the round's time)" },
    { .name = "latency-size", CBK_AT_SIZE(OPT, latency_size), .default_value = "8", .unit = "bytes", .min = "0",
      .max = "64k", .help = "bytes of each latency message" },
    { .name = "latency-iterations", CBK_AT_INT(OPT, latency_iterations), .default_value = "100", .unit = "count",
      .min = "1", .max = "1000000", .help = "latency exchanges per shift round" },
    { .name = "latency", CBK_AT_BOOL(OPT, latency), .default_value = "true",
      .help = "also measure every link's latency" },
    { 0 },
};

#define HOST_CHARS PATIENT_HOST_CHARS
#define GO_TAG 4096   /* a receiver's "my clock runs" (data messages use tags below the largest window) */

struct linkmatrix_state {
    const char (*host)[HOST_CHARS];   /* every rank's host name: on.hosts */
    unsigned char *send, *recv;   /* window * size bytes each */
    double *bw_s, *lat_s;         /* [round][iteration]: this rank as receiver */
    double *zero, *scratch;       /* an idle rank's times; cbk_report_iterations' scratch */
    double *sender_s;             /* one-pair: the sending side's times, not reported */
    struct cbk_tcp_counts *tcp;   /* [src * size + dst], on rank 0: what TCP did in the rounds */
    bool tcp_duplicates_known;    /* every rank's kernel counts D-SACKs */
    /* Test hook: CBK_TEST_LATE_RECEIVER_MS=N makes rank 1 start each
     * round's clock N ms late, as a receiver descheduled on a loaded node
     * does (read at set-up, never in the timed loop) */
    long late_receiver_ms;
    /* Whom this rank's waits are on, said past CBK_WAIT_NOTE_S (default
     * 30 s): a stopped node holds the others for ever, and the step's time
     * limit then names it (patient_wait.h) */
    struct patient_peers on;
    struct cbk_stall_watch *watch;   /* the latency loops' (NULL: off) */
};

static int64_t longest(const OPT *o) { return o->iterations > o->latency_iterations ? o->iterations : o->latency_iterations; }

static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    const OPT *o = opt(a);
    if ((double)o->size * (double)o->window > 1024.0 * 1024 * 1024) {
        snprintf(why, len, "linkmatrix: --size x --window is over 1 GiB per buffer: give a smaller window");
        return -1;
    }
    (void)c;
    return 0;
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    const OPT *o = opt(a);
    struct linkmatrix_state *s = calloc(1, sizeof *s);
    size_t rounds = c->size > 1 ? (size_t)c->size - 1 : 1, bytes = (size_t)(o->size * (uint64_t)o->window);
    if (!s || !(s->send = malloc(bytes)) ||
        !(s->recv = malloc(bytes)) || !(s->bw_s = calloc(rounds * (size_t)o->iterations, sizeof(double))) ||
        !(s->lat_s = calloc(rounds * (size_t)o->latency_iterations, sizeof(double))) ||
        !(s->zero = calloc((size_t)longest(o), sizeof(double))) ||
        !(s->scratch = calloc((size_t)longest(o), sizeof(double))) ||
        !(s->sender_s = calloc((size_t)longest(o), sizeof(double))) ||
        !(s->tcp = calloc((size_t)c->size * (size_t)c->size, sizeof *s->tcp)))
        cbk_fail(c, CBK_EXIT_FAILED, "linkmatrix: out of memory");
    memset(s->send, 0xa5, bytes);
    const char *late = getenv("CBK_TEST_LATE_RECEIVER_MS");
    s->late_receiver_ms = late ? atol(late) : 0;
    if (cbk_patient_peers_gather(c->comm, &s->on))
        cbk_fail(c, CBK_EXIT_FAILED, "linkmatrix: out of memory for %d host names", c->size);
    s->host = (const char (*)[HOST_CHARS])s->on.hosts;
    s->watch = cbk_stall_watch_start(&s->on);
    c->state = s;
    return 0;
}

/* The rank each of a window's requests is with: w receives from `from`,
 * then w sends to `to` (the layout of exchange's and stream_round's). */
static void peers_of(int *peer, int w, int from, int to)
{
    for (int i = 0; i < w; i++) {
        peer[i] = from;
        peer[w + i] = to;
    }
}

/* One exchange of `window` messages each way (the warm-up: connections
 * are made lazily). */
static void exchange(struct cbk_ctx *c, const OPT *o, struct linkmatrix_state *s, int to, int from)
{
    MPI_Request req[2 * 1024];
    int w = (int)o->window, peer[2 * 1024];
    for (int i = 0; i < w; i++)
        MPI_Irecv(s->recv + (size_t)i * o->size, (int)o->size, MPI_BYTE, from, i, c->comm, &req[i]);
    for (int i = 0; i < w; i++)
        MPI_Isend(s->send + (size_t)i * o->size, (int)o->size, MPI_BYTE, to, i, c->comm, &req[w + i]);
    peers_of(peer, w, from, to);
    cbk_patient_waitall(2 * w, req, peer, &s->on);
}

/* One round's bandwidth: iterations x window messages to rank+k and from
 * rank-k, each direction kept `window` deep on its own, so a slow incoming
 * link does not hold back this rank's outgoing one (a lock-step exchange
 * would: every link of a round would run at its slowest neighbour's pace).
 * chunk_s[i]: time between the arrivals of windows i and i-1 from rank-k,
 * the first from the round's start: every byte is counted from a moment
 * none had been sent. A rank that polls late finds later windows already
 * in its socket buffer, so timing from a later window would overstate the
 * link; so would a receiver that leaves the barrier late (descheduled on a
 * loaded node) while its sender streams into the buffers: the receiver
 * starts its clock, then tells its sender to go (a zero-byte message), and
 * a rank sends only once its receiver said so. The word's one crossing is
 * in the round's time: it can only understate the link, by one latency. */
static void stream_round(struct cbk_ctx *c, const OPT *o, struct linkmatrix_state *s, int to, int from,
                         double *chunk_s)
{
    MPI_Request req[2 * 1024], go[2];
    char word = 0;
    int w = (int)o->window, peer[2 * 1024], go_peer[2] = { from, to };
    peers_of(peer, w, from, to);
    int64_t total = o->iterations * o->window, recv_posted = 0, send_posted = 0, received = 0;
    if (s->late_receiver_ms > 0 && c->rank == 1)
        usleep((useconds_t)(s->late_receiver_ms * 1000));
    double last = MPI_Wtime();
    for (int i = 0; i < w; i++, recv_posted++)
        MPI_Irecv(s->recv + (size_t)i * o->size, (int)o->size, MPI_BYTE, from, 0, c->comm, &req[i]);
    MPI_Isend(&word, 0, MPI_BYTE, from, GO_TAG, c->comm, &go[0]);   /* my clock runs: send to me */
    MPI_Irecv(&word, 0, MPI_BYTE, to, GO_TAG, c->comm, &go[1]);     /* my receiver's clock runs */
    cbk_patient_waitall(2, go, go_peer, &s->on);
    for (int i = 0; i < w; i++, send_posted++)
        MPI_Isend(s->send + (size_t)i * o->size, (int)o->size, MPI_BYTE, to, 0, c->comm, &req[w + i]);
    for (;;) {
        int idx;
        cbk_patient_waitany(2 * w, req, &idx, peer, &s->on);
        if (idx == MPI_UNDEFINED)
            break;   /* every request done */
        if (idx < w) {
            if (++received % w == 0) {
                double now = MPI_Wtime();
                chunk_s[received / w - 1] = now - last;
                last = now;
            }
            if (recv_posted < total && ++recv_posted)
                MPI_Irecv(s->recv + (size_t)idx * o->size, (int)o->size, MPI_BYTE, from, 0, c->comm, &req[idx]);
        } else if (send_posted < total && ++send_posted) {
            MPI_Isend(s->send + (size_t)(idx - w) * o->size, (int)o->size, MPI_BYTE, to, 0, c->comm, &req[idx]);
        }
    }
}

/* The latency loop's watch: a message each way per exchange, so the rank
 * may be held by either peer (a small message's send returns at once,
 * and then it is the one it receives from). */
static void watch_latency(struct linkmatrix_state *s, const double *lat, int64_t n, int k, int from, int to)
{
    if (from == to)
        cbk_stall_watch_enter(s->watch, lat, (size_t)n, "the timed latency exchanges of shift %d, with rank %d (%s)",
                              k, from, s->host[from]);
    else
        cbk_stall_watch_enter(s->watch, lat, (size_t)n,
                              "the timed latency exchanges of shift %d, receiving from rank %d (%s) and sending to "
                              "rank %d (%s)", k, from, s->host[from], to, s->host[to]);
}

static void measure(struct cbk_ctx *c, const OPT *o, struct linkmatrix_state *s)
{
    for (int k = 1; k < c->size; k++) {
        int to = (c->rank + k) % c->size, from = (c->rank - k + c->size) % c->size;
        double *bw = s->bw_s + (size_t)(k - 1) * (size_t)o->iterations;
        exchange(c, o, s, to, from);
        cbk_patient_barrier(c->comm, &s->on);
        stream_round(c, o, s, to, from, bw);
        cbk_patient_barrier(c->comm, &s->on);
        if (!o->latency)
            continue;
        double *lat = s->lat_s + (size_t)(k - 1) * (size_t)o->latency_iterations;
        watch_latency(s, lat, o->latency_iterations, k, from, to);
        for (int64_t i = -1; i < o->latency_iterations; i++) {   /* i = -1: warm-up */
            double t0 = MPI_Wtime();
            MPI_Sendrecv(s->send, (int)o->latency_size, MPI_BYTE, to, 0, s->recv, (int)o->latency_size, MPI_BYTE,
                         from, 0, c->comm, MPI_STATUS_IGNORE);
            if (i >= 0)
                lat[i] = MPI_Wtime() - t0;
        }
        cbk_stall_watch_leave(s->watch);
        cbk_patient_barrier(c->comm, &s->on);
    }
}

/* One ordered pair at a time: in shift k's turn of src, src streams to
 * dst = src+k while every other rank waits at the barrier; dst times the
 * arrivals into the same slot the shift pattern uses (row k-1), so the
 * records are made the same way. MPI_PROC_NULL stands for the direction
 * that carries nothing. */
static void measure_one_pair(struct cbk_ctx *c, const OPT *o, struct linkmatrix_state *s)
{
    for (int k = 1; k < c->size; k++) {
        for (int src = 0; src < c->size; src++) {
            int dst = (src + k) % c->size;
            bool sending = c->rank == src, receiving = c->rank == dst;
            int to = sending ? dst : MPI_PROC_NULL, from = receiving ? src : MPI_PROC_NULL;
            double *bw = receiving ? s->bw_s + (size_t)(k - 1) * (size_t)o->iterations : s->sender_s;
            if (sending || receiving)
                exchange(c, o, s, to, from);
            cbk_patient_barrier(c->comm, &s->on);
            if (sending || receiving)
                stream_round(c, o, s, to, from, bw);
            cbk_patient_barrier(c->comm, &s->on);
            if (!o->latency)
                continue;
            double *lat = receiving ? s->lat_s + (size_t)(k - 1) * (size_t)o->latency_iterations : s->sender_s;
            int peer = sending ? dst : src;
            if (sending || receiving)
                watch_latency(s, lat, o->latency_iterations, k, peer, peer);
            for (int64_t i = -1; (sending || receiving) && i < o->latency_iterations; i++) {
                double t0 = MPI_Wtime();
                MPI_Sendrecv(s->send, (int)o->latency_size, MPI_BYTE, peer, 0, s->recv, (int)o->latency_size,
                             MPI_BYTE, peer, 0, c->comm, MPI_STATUS_IGNORE);
                if (i >= 0)
                    lat[i] = MPI_Wtime() - t0;
            }
            cbk_stall_watch_leave(s->watch);
            cbk_patient_barrier(c->comm, &s->on);
        }
    }
}

/* The record of link src -> dst: only dst (the receiver) is active. */
static int report_link(struct cbk_ctx *c, const OPT *o, struct linkmatrix_state *s, int src, int dst, bool bandwidth)
{
    int k = (dst - src + c->size) % c->size;
    int64_t n = bandwidth ? o->iterations : o->latency_iterations;
    double *mine = (bandwidth ? s->bw_s : s->lat_s) + (size_t)(k - 1) * (size_t)n;
    struct cbk_phase p = { .phase = bandwidth ? "link_bandwidth" : "link_latency",
                           .bytes = bandwidth ? o->size * (uint64_t)o->window : o->latency_size };
    struct cbk_iterations it = { .seconds = c->rank == dst ? mine : s->zero, .scratch = s->scratch, .count = n,
                                 .scale = 1.0, .active = c->rank == dst, .bandwidth = bandwidth };
    if (bandwidth)
        it.messages = (double)o->window;
    cbk_phase_qualifier(&p, "src_host", s->host[src]);
    cbk_phase_qualifier(&p, "dst_host", s->host[dst]);
    cbk_phase_field(&p, CBK_I64("src_rank", src));
    cbk_phase_field(&p, CBK_I64("dst_rank", dst));
    cbk_phase_field(&p, CBK_I64("shift", k));
    cbk_phase_field(&p, CBK_TEXT("pattern", pattern_names[o->pattern]));
    cbk_phase_field(&p, CBK_BOOL("same_node", strcmp(s->host[src], s->host[dst]) == 0));
    cbk_phase_field(&p, CBK_I64("nodes", c->nodes));
    /* each message's size, as the mpi kernel's size_bytes: the bytes timed are window messages of it */
    cbk_phase_field(&p, CBK_U64("size_bytes", bandwidth ? o->size : o->latency_size));
    cbk_phase_field(&p, CBK_I64("window", bandwidth ? o->window : 1));
    cbk_phase_field(&p, CBK_I64("iterations", n));
    if (c->nodes < c->size)
        cbk_phase_warn(&p, "more than one rank per node: some pairs share a node, so not every pair is a link");
    return cbk_report_iterations(c, &p, &it);
}

/* The record of link src -> dst's TCP retransmissions: rank 0 holds every
 * link's counts. The driver's rate is value / (end - begin): a span of 1 s
 * makes it the percentage. */
static void report_retransmits(struct cbk_ctx *c, const OPT *o, struct linkmatrix_state *s, int src, int dst)
{
    size_t at = (size_t)src * (size_t)c->size + (size_t)dst;
    const struct cbk_tcp_counts *tcp = &s->tcp[at];
    uint64_t sent = tcp->bytes_sent, again = tcp->bytes_retransmitted;
    struct cbk_phase p = { .phase = "link_retransmits", .value_unit = "%", .begin_s = 0.0, .end_s = 1.0,
                           .bytes = c->rank == 0 ? sent : 0 };
    p.value = c->rank == 0 && sent ? 100.0 * (double)again / (double)sent : 0.0;
    cbk_phase_qualifier(&p, "src_host", s->host[src]);
    cbk_phase_qualifier(&p, "dst_host", s->host[dst]);
    cbk_phase_field(&p, CBK_I64("src_rank", src));
    cbk_phase_field(&p, CBK_I64("dst_rank", dst));
    cbk_phase_field(&p, CBK_I64("shift", (dst - src + c->size) % c->size));
    cbk_phase_field(&p, CBK_TEXT("pattern", pattern_names[o->pattern]));
    cbk_phase_field(&p, CBK_I64("nodes", c->nodes));
    cbk_phase_field(&p, CBK_U64("tcp_bytes_sent", sent));
    cbk_phase_field(&p, CBK_U64("tcp_bytes_retransmitted", again));
    if (s->tcp_duplicates_known) {   /* a kernel before 4.19 has no D-SACK count: no field, not a zero */
        cbk_phase_field(&p, CBK_U64("tcp_segments_sent", tcp->segments_sent));
        cbk_phase_field(&p, CBK_U64("tcp_segments_duplicated", tcp->segments_duplicated));
    }
    if (!sent)
        cbk_phase_warn(&p, "no TCP bytes went from src to dst in the rounds: the library carried this link otherwise");
    cbk_report(c, &p);
}

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    const OPT *o = opt(a);
    struct linkmatrix_state *s = c->state;
    if (c->size < 2)
        cbk_fail(c, CBK_EXIT_BAD_INPUT, "linkmatrix: needs two ranks or more (one per node: --np N --ppn 1)");
    struct cbk_tcp_sockets *before = cbk_tcp_census();
    if (o->pattern == PATTERN_ONE_PAIR)
        measure_one_pair(c, o, s);
    else
        measure(c, o, s);
    /* the closing exchanges are collectives of every rank: a rank stopped
     * before or in them holds the others, who say so (the count of records
     * made is the stretch's progress: a large matrix's many reductions are
     * not taken for a stall) */
    double records_made = 0;
    cbk_stall_watch_enter(s->watch, &records_made, 1,
                          "the closing exchanges (TCP counts, the records' reductions), a collective of %s: a rank "
                          "that does not say so holds it", s->on.every_rank);
    cbk_test_stop_at(c->rank, "closing");
    struct cbk_tcp_sockets *after = cbk_tcp_census();
    struct cbk_tcp_counts *row = s->tcp + (size_t)c->rank * (size_t)c->size;
    bool tcp = cbk_tcp_retransmits_by_rank(c->comm, before, after, row, &s->tcp_duplicates_known);
    cbk_tcp_census_free(before);
    cbk_tcp_census_free(after);
    if (tcp) {   /* every rank's row to rank 0 (in place there) */
        int u64 = c->size * (int)CBK_TCP_COUNTS_U64;
        MPI_Gather(c->rank ? (void *)row : MPI_IN_PLACE, u64, MPI_UINT64_T, s->tcp, u64, MPI_UINT64_T, 0, c->comm);
    }
    for (int bw = 1; bw >= (o->latency ? 0 : 1); bw--)
        for (int src = 0; src < c->size; src++)
            for (int dst = 0; dst < c->size; dst++)
                if (src != dst) {
                    records_made++;
                    if (report_link(c, o, s, src, dst, bw))
                        cbk_fail(c, CBK_EXIT_FAILED, "linkmatrix: an MPI reduction failed");
                }
    for (int src = 0; tcp && src < c->size; src++)
        for (int dst = 0; dst < c->size; dst++)
            if (src != dst) {
                records_made++;
                report_retransmits(c, o, s, src, dst);
            }
    cbk_stall_watch_leave(s->watch);
    return 0;
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct linkmatrix_state *s = c->state;
    if (!s)
        return;
    cbk_stall_watch_stop(s->watch);
    free((char *)s->on.hosts);
    free(s->send);
    free(s->recv);
    free(s->bw_s);
    free(s->lat_s);
    free(s->zero);
    free(s->scratch);
    free(s->sender_s);
    free(s->tcp);
    free(s);
    c->state = NULL;
}

const struct cbk_kernel cbk_kernel_linkmatrix = {
    .name = "linkmatrix",
    .summary = "bandwidth and latency of every ordered pair of nodes, mpiGraph's shift pattern (one rank per node)",
    .family = CBK_FAMILY_MPI,
    .flags = CBK_PARALLEL,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
