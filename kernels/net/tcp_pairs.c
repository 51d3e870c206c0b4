/* role=pairs (E6): N client/server pairs under MPI, started at one moment.
 * Rank i < N serves, rank i + N connects to rank i (--pairing=halves), or
 * rank 2i serves and rank 2i + 1 connects (--pairing=adjacent). Each server tells its
 * client over MPI where it listens (port, hostname, addresses); the client
 * picks the server address on a subnet it shares, unless --server lists one
 * per pair. After every pair is connected, all ranks pass one MPI barrier,
 * then every client sends START: the pairs run concurrently for the same
 * duration.
 *
 * Records: one measurement per direction with the aggregate (all bits over
 * latest end minus earliest start, IOR's rule; cbk_report reduces it), and
 * one "tcp_pairs" record with each pair's rate, per-interval series, start
 * offset and ratio to its link's nominal speed. */
#include "tcp.h"

#include "../core/record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CBK_HAVE_MPI

int tcp_pairs_setup(const struct cbk_args *a, struct cbk_ctx *c, void **state)
{
    (void)a, (void)state;
    cbk_fail(c, CBK_EXIT_BAD_INPUT, "tcp: role=pairs needs cbk built with MPI");
}
int tcp_pairs_run(const struct cbk_args *a, struct cbk_ctx *c, void *state)
{
    (void)a, (void)state;
    cbk_fail(c, CBK_EXIT_BAD_INPUT, "tcp: role=pairs needs cbk built with MPI");
}
void tcp_pairs_teardown(struct cbk_ctx *c, void *state) { (void)c, (void)state; }

#else

#define TAG_ANNOUNCE 7301
#define NAME_LEN 128

struct announce {
    int32_t port;
    char host[NAME_LEN];
    char addresses[1024];
};

struct pairs {
    int n, pair, peer;       /* pairs, this rank's pair, the other rank of it */
    bool server, adjacent;   /* adjacent: rank 2i serves 2i+1; else i serves i+N */
    struct tcp_listener listener;
    char server_addr[TCP_HOST_LEN], server_host[NAME_LEN];
    int server_port;
    struct tcp_result *result;
};

/* What rank 0 learns about each pair, per direction. */
struct pair_summary {
    double bytes, sender_bytes, calls, retransmits, seconds, begin_s, end_s, rtt_us, nominal_gbit, start_realtime;
    double lat_p50_us, lat_p99_us;
    int32_t client;
    char client_host[NAME_LEN], server_host[NAME_LEN], server[TCP_HOST_LEN];
};

static int server_rank(const struct pairs *p, int pair) { return p->adjacent ? 2 * pair : pair; }
static int client_rank(const struct pairs *p, int pair) { return p->adjacent ? 2 * pair + 1 : pair + p->n; }

static int barrier(void *arg, char *why, size_t len)
{
    (void)why, (void)len;
    MPI_Barrier(((struct cbk_ctx *)arg)->comm);
    return 0;
}

int tcp_pairs_setup(const struct cbk_args *a, struct cbk_ctx *c, void **state)
{
    struct pairs *p = calloc(1, sizeof *p);
    if (!p || !(p->result = calloc(1, sizeof *p->result)))
        cbk_fail(c, CBK_EXIT_FAILED, "tcp: out of memory");
    *state = p;
    p->n = c->size / 2;
    p->adjacent = tcp_options(a)->pairing == TCP_PAIRING_ADJACENT;
    p->pair = p->adjacent ? c->rank / 2 : c->rank % p->n;
    p->server = c->rank == server_rank(p, p->pair);
    p->peer = p->server ? client_rank(p, p->pair) : server_rank(p, p->pair);
    p->listener.fd = -1;
    struct announce an;
    memset(&an, 0, sizeof an);
    char why[TCP_WHY];
    if (p->server) {
        int64_t port = tcp_options(a)->port;
        if (port && port + p->pair > 65535)
            cbk_fail(c, CBK_EXIT_BAD_INPUT, "tcp: pair %d would listen on port %lld + %d, beyond 65535: give a lower --port",
                     p->pair, (long long)port, p->pair);
        if (tcp_listen(&p->listener, tcp_bind_arg(a), port ? (int)port + p->pair : 0, why, sizeof why))
            cbk_fail(c, CBK_EXIT_FAILED, "tcp: pair %d server (rank %d): %s", p->pair, c->rank, why);
        an.port = p->listener.port;
        if (gethostname(an.host, sizeof an.host))
            snprintf(an.host, sizeof an.host, "unknown");
        an.host[sizeof an.host - 1] = '\0';
        tcp_local_addresses(an.addresses, sizeof an.addresses);
        MPI_Send(&an, sizeof an, MPI_BYTE, p->peer, TAG_ANNOUNCE, c->comm);
    } else {
        MPI_Recv(&an, sizeof an, MPI_BYTE, p->peer, TAG_ANNOUNCE, c->comm, MPI_STATUS_IGNORE);
        p->server_port = an.port;
        snprintf(p->server_host, sizeof p->server_host, "%s", an.host);
        const char *list = tcp_options(a)->server;
        if (list) {
            /* the pair-th entry of the comma-separated list */
            const char *s = list;
            for (int i = 0; i < p->pair && s; i++)
                s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL;
            size_t n = s ? strcspn(s, ",") : 0;
            snprintf(p->server_addr, sizeof p->server_addr, "%.*s", (int)n, s ? s : "");
        } else if (an.addresses[0]) {
            tcp_pick_address(an.addresses, p->server_addr, sizeof p->server_addr);
        } else {
            /* a host with loopback only: server and client share it */
            snprintf(p->server_addr, sizeof p->server_addr, "127.0.0.1");
        }
    }
    return 0;
}

void tcp_pairs_teardown(struct cbk_ctx *c, void *state)
{
    (void)c;
    struct pairs *p = state;
    tcp_listener_close(&p->listener);
    tcp_result_free(p->result);
    free(p->result);
    free(p);
}

static double gbit(double bytes, double seconds) { return seconds > 0 ? bytes * 8.0 / seconds / 1e9 : 0.0; }

/* Receiver bytes per interval of one direction, over its connections. */
static void interval_series(const struct tcp_result *r, bool client_sends, uint64_t *out, uint32_t slots)
{
    for (uint32_t k = 0; k < r->conns; k++) {
        if (tcp_client_sends(&r->cfg, k) != client_sends)
            continue;
        const struct tcp_side *rx = client_sends ? &r->remote[k] : &r->local[k];
        for (uint32_t i = 0; i < rx->intervals && i < slots; i++)
            out[i] += rx->interval_bytes[i];
    }
}

static void write_pairs_record(struct cbk_ctx *c, const struct pairs *p, const struct tcp_config *cfg, const char *phase,
                               const struct pair_summary *all, const uint64_t *series, double *rates, uint32_t slots,
                               double shared_gbit)
{
    int n = p->n;
    bool rr = cfg->test == TCP_TEST_RR;
    double total_bits = 0, begin = INFINITY, end = -INFINITY, nominal = 0, first_start = INFINITY;
    bool nominal_known = true;
    for (int i = 0; i < n; i++) {
        const struct pair_summary *s = &all[client_rank(p, i)];
        total_bits += rr ? s->calls : s->bytes * 8.0;
        begin = fmin(begin, s->begin_s);
        end = fmax(end, s->end_s);
        first_start = fmin(first_start, s->start_realtime);
        if (s->nominal_gbit > 0)
            nominal += s->nominal_gbit;
        else
            nominal_known = false;
    }
    double aggregate = end > begin ? (rr ? total_bits : total_bits / 1e9) / (end - begin) : 0;
    struct cbk_json j;
    cbk_record_begin(&j, c->out, c, "tcp_pairs");
    cbk_json_i64(&j, "repetition", c->repetition);
    cbk_json_text(&j, "phase", phase);
    cbk_json_text(&j, "test", rr ? "rr" : "stream");
    cbk_json_real(&j, "interval_s", cfg->interval_s);
    cbk_json_array(&j, "pairs");
    for (int i = 0; i < n; i++) {
        const struct pair_summary *s = &all[client_rank(p, i)];
        cbk_json_object(&j, NULL);
        cbk_json_i64(&j, "pair", i);
        cbk_json_i64(&j, "server_rank", server_rank(p, i));
        cbk_json_i64(&j, "client_rank", client_rank(p, i));
        cbk_json_text(&j, "server_host", all[server_rank(p, i)].server_host);
        cbk_json_text(&j, "client_host", s->client_host);
        cbk_json_text(&j, "server", s->server);
        cbk_json_u64(&j, "bytes", (uint64_t)s->bytes);
        cbk_json_real(&j, "seconds", s->seconds);
        if (rr) {
            cbk_json_u64(&j, "transactions", (uint64_t)s->calls);
            cbk_json_real(&j, "transactions_per_s", s->seconds > 0 ? s->calls / s->seconds : 0);
            cbk_json_real(&j, "latency_us_p50", s->lat_p50_us);
            cbk_json_real(&j, "latency_us_p99", s->lat_p99_us);
        } else {
            double g = gbit(s->bytes, s->seconds);
            cbk_json_real(&j, "gbit_per_s", g);
            cbk_json_real(&j, "mib_per_s", s->seconds > 0 ? s->bytes / s->seconds / 1048576.0 : 0);
            cbk_json_u64(&j, "retransmits", (uint64_t)s->retransmits);
            cbk_json_real(&j, "link_gbit_per_s", s->nominal_gbit > 0 ? s->nominal_gbit : NAN);
            cbk_json_real(&j, "link_ratio", s->nominal_gbit > 0 ? g / s->nominal_gbit : NAN);
            /* slots used: up to the pair's longest receiver time */
            const uint64_t *mine = series + (size_t)client_rank(p, i) * slots;
            uint32_t used = 0;
            while (used < slots && (double)used * cfg->interval_s < s->seconds)
                used++;
            uint32_t m = 0;
            tcp_interval_rates(mine, used, s->seconds, cfg->interval_s, false, rates, &m);
            cbk_json_array(&j, "intervals_gbit_per_s");
            for (uint32_t k = 0; k < m; k++)
                cbk_json_real(&j, NULL, rates[k]);
            cbk_json_close(&j);
        }
        cbk_json_real(&j, "start_offset_s", s->start_realtime - first_start);
        cbk_json_close(&j);
    }
    cbk_json_close(&j);
    if (rr) {
        cbk_json_real(&j, "aggregate_transactions_per_s", aggregate);
    } else {
        cbk_json_real(&j, "aggregate_gbit_per_s", aggregate);
        cbk_json_real(&j, "nominal_gbit_per_s", nominal_known ? nominal : NAN);
        cbk_json_real(&j, "ratio", nominal_known && nominal > 0 ? aggregate / nominal : NAN);
        /* E6: the trunk all pairs cross may be slower than their links' sum */
        cbk_json_real(&j, "shared_link_gbit_per_s", shared_gbit > 0 ? shared_gbit : NAN);
        cbk_json_real(&j, "shared_link_ratio", shared_gbit > 0 ? aggregate / shared_gbit : NAN);
    }
    cbk_record_end(&j, c);
}

/* Collective: every rank calls it with its own part. */
static void report_direction(struct cbk_ctx *c, const struct cbk_args *a, struct pairs *p, bool client_sends)
{
    const struct tcp_result *r = p->result;
    const struct tcp_config *cfg = &r->cfg;
    bool rr = cfg->test == TCP_TEST_RR;
    double link_arg = tcp_options(a)->link_speed;
    struct pair_summary mine;
    memset(&mine, 0, sizeof mine);
    struct cbk_phase ph;
    memset(&ph, 0, sizeof ph);
    double times[2] = { 0, 0 };
    if (!p->server) {
        double nominal = tcp_pair_nominal_gbit(r, link_arg);
        if (rr) {
            double seconds = 0;
            for (uint32_t k = 0; k < r->conns; k++) {
                mine.calls += (double)r->local[k].calls;
                mine.retransmits += (double)(r->local[k].retransmits + r->remote[k].retransmits);
                seconds = fmax(seconds, r->local[k].seconds);
            }
            mine.bytes = mine.calls * (double)(cfg->request_bytes + cfg->response_bytes);
            mine.seconds = seconds;
            mine.lat_p50_us = (double)cbk_histogram_percentile(&r->latency, 50) / 1e3;
            mine.lat_p99_us = (double)cbk_histogram_percentile(&r->latency, 99) / 1e3;
            ph.phase = "rr";
            cbk_phase_qualifier(&ph, "rate_basis", "round-trip");
            ph.bytes = (uint64_t)mine.bytes;
            ph.ops = (uint64_t)mine.calls;
            ph.value_unit = "transactions/s";
            ph.value = mine.calls;
            ph.begin_s = r->start_s - c->epoch_s;
            ph.end_s = ph.begin_s + seconds;
        } else {
            struct tcp_direction_total t;
            tcp_direction_total(r, client_sends, &t);
            tcp_stream_phase(&ph, r, client_sends, &t, p->server_addr, nominal, c->epoch_s);
            mine.bytes = (double)t.bytes;
            mine.sender_bytes = (double)t.sender_bytes;
            mine.calls = (double)t.calls;
            mine.retransmits = (double)t.retransmits;
            mine.seconds = t.seconds;
            mine.rtt_us = t.rtt_us_mean;
        }
        mine.begin_s = ph.begin_s;
        mine.end_s = ph.end_s;
        mine.nominal_gbit = nominal;
        mine.start_realtime = r->start_realtime;
        mine.client = 1;
        times[0] = ph.begin_s;
        times[1] = ph.end_s;
        MPI_Send(times, 2, MPI_DOUBLE, p->peer, TAG_ANNOUNCE + 1, c->comm);
    } else {
        /* a server rank reports no bytes of its own, over its client's
         * time span, so the rank spread shows the pairs' spread */
        MPI_Recv(times, 2, MPI_DOUBLE, p->peer, TAG_ANNOUNCE + 1, c->comm, MPI_STATUS_IGNORE);
        ph.phase = rr ? "rr" : client_sends ? "send" : "receive";
        cbk_phase_qualifier(&ph, "rate_basis", rr ? "round-trip" : "receiver");
        ph.value_unit = rr ? "transactions/s" : "Gbit/s";
        ph.begin_s = times[0];
        ph.end_s = times[1];
    }
    if (gethostname(mine.client_host, sizeof mine.client_host))
        snprintf(mine.client_host, sizeof mine.client_host, "unknown");
    mine.client_host[sizeof mine.client_host - 1] = '\0';
    snprintf(mine.server_host, sizeof mine.server_host, "%s", mine.client_host);
    snprintf(mine.server, sizeof mine.server, "%s", p->server_addr);

    uint32_t slots = tcp_interval_slots(cfg);
    uint64_t *series = calloc(slots, sizeof *series);
    struct pair_summary *all = c->rank == 0 ? calloc((size_t)c->size, sizeof *all) : NULL;
    uint64_t *all_series = c->rank == 0 ? calloc((size_t)c->size * slots, sizeof *all_series) : NULL;
    double *rates = c->rank == 0 ? calloc(slots, sizeof *rates) : NULL;
    if (!series || (c->rank == 0 && (!all || !all_series || !rates)))
        cbk_fail(c, CBK_EXIT_FAILED, "tcp: out of memory for the pairs' summaries");
    if (!p->server && !rr)
        interval_series(r, client_sends, series, slots);
    MPI_Gather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, 0, c->comm);
    MPI_Gather(series, (int)slots, MPI_UINT64_T, all_series, (int)slots, MPI_UINT64_T, 0, c->comm);

    /* Latency percentiles over all pairs: the histograms' buckets add up. */
    struct cbk_histogram merged = { 0 };
    if (rr) {
        struct cbk_histogram empty;
        const struct cbk_histogram *h = &r->latency;
        if (p->server) {
            if (cbk_histogram_init(&empty, TCP_HIST_LOW_NS, TCP_HIST_HIGH_NS))
                cbk_fail(c, CBK_EXIT_FAILED, "tcp: out of memory for a histogram");
            h = &empty;
        }
        if (cbk_histogram_init(&merged, TCP_HIST_LOW_NS, TCP_HIST_HIGH_NS))
            cbk_fail(c, CBK_EXIT_FAILED, "tcp: out of memory for a histogram");
        cbk_reduce_histogram(c, h, &merged);
        if (p->server)
            cbk_histogram_free(&empty);
    }

    char overrun[320];   /* a warning of ph's: lives until cbk_report */
    if (c->rank == 0) {
        /* rank 0 serves pair 0: its record fields describe the aggregate */
        double sender = 0, retrans = 0, nominal = 0, pmin = INFINITY, pmax = 0, smin = INFINITY, smax = -INFINITY;
        double bytes = 0, begin = INFINITY, end = -INFINITY, longest_client_s = 0;
        bool known = true;
        for (int i = 0; i < p->n; i++) {
            const struct pair_summary *s = &all[client_rank(p, i)];
            double rate = rr ? (s->seconds > 0 ? s->calls / s->seconds : 0) : gbit(s->bytes, s->seconds);
            sender += s->sender_bytes;
            retrans += s->retransmits;
            longest_client_s = fmax(longest_client_s, s->seconds);
            bytes += rr ? s->calls : s->bytes * 8.0 / 1e9;
            begin = fmin(begin, s->begin_s);
            end = fmax(end, s->end_s);
            pmin = fmin(pmin, rate);
            pmax = fmax(pmax, rate);
            smin = fmin(smin, s->start_realtime);
            smax = fmax(smax, s->start_realtime);
            if (s->nominal_gbit > 0)
                nominal += s->nominal_gbit;
            else
                known = false;
        }
        double aggregate = end > begin ? bytes / (end - begin) : 0;
        cbk_phase_field(&ph, CBK_U64("pairs", (uint64_t)p->n));
        cbk_phase_field(&ph, CBK_U64("streams", r->cfg.streams));
        cbk_phase_field(&ph, CBK_REAL("duration_s", cfg->duration_s));
        cbk_phase_field(&ph, CBK_U64("retransmits", (uint64_t)retrans));
        cbk_phase_field(&ph, CBK_REAL(rr ? "pair_transactions_per_s_min" : "pair_gbit_per_s_min", pmin));
        cbk_phase_field(&ph, CBK_REAL(rr ? "pair_transactions_per_s_max" : "pair_gbit_per_s_max", pmax));
        cbk_phase_field(&ph, CBK_REAL("start_spread_s", smax - smin));
        cbk_phase_field(&ph, CBK_BOOL("nodelay", cfg->nodelay));
        if (rr) {
            cbk_phase_field(&ph, CBK_U64("request_bytes", cfg->request_bytes));
            cbk_phase_field(&ph, CBK_U64("response_bytes", cfg->response_bytes));
            cbk_phase_field(&ph, CBK_U64("latency_samples", merged.count));
            cbk_phase_field(&ph, CBK_REAL("latency_us_mean", cbk_histogram_mean(&merged) / 1e3));
            cbk_phase_field(&ph, CBK_REAL("latency_us_p50", (double)cbk_histogram_percentile(&merged, 50) / 1e3));
            cbk_phase_field(&ph, CBK_REAL("latency_us_p99", (double)cbk_histogram_percentile(&merged, 99) / 1e3));
            cbk_phase_field(&ph, CBK_REAL("latency_us_max", (double)cbk_histogram_max(&merged) / 1e3));
        } else {
            cbk_phase_field(&ph, CBK_REAL("mib_per_s", end > begin ? bytes * 1e9 / 8.0 / (end - begin) / 1048576.0 : 0));
            cbk_phase_field(&ph, CBK_U64("message_bytes", cfg->message_bytes));
            cbk_phase_field(&ph, CBK_U64("receive_batch_bytes", cfg->receive_batch_bytes));
            cbk_phase_field(&ph, CBK_U64("sender_bytes", (uint64_t)sender));
            cbk_phase_field(&ph, CBK_REAL("link_gbit_per_s", known ? nominal : NAN));
            cbk_phase_field(&ph, CBK_REAL("link_ratio", known && nominal > 0 ? aggregate / nominal : NAN));
        }
        if (smax - smin > 0.1 * cfg->duration_s)
            cbk_phase_warn(&ph, "the pairs' starts are spread over more than a tenth of the duration: not fully concurrent");
        if (rr && tcp_rr_overrun(cfg, longest_client_s, (double)cbk_histogram_max(&merged) / 1e9, overrun,
                                 sizeof overrun))
            cbk_phase_warn(&ph, overrun);
    }
    cbk_report(c, &ph);
    if (c->rank == 0)
        write_pairs_record(c, p, cfg, ph.phase, all, all_series, rates, slots, tcp_options(a)->shared_link_speed);
    cbk_histogram_free(&merged);
    free(series);
    free(all);
    free(all_series);
    free(rates);
}

int tcp_pairs_run(const struct cbk_args *a, struct cbk_ctx *c, void *state)
{
    struct pairs *p = state;
    struct tcp_config cfg;
    tcp_config_from_args(a, &cfg);
    cfg.repetition = c->repetition;
    cfg.repetitions = (int32_t)a->common.repetitions;
    struct tcp_hook hook = { .before_start = barrier, .arg = c };
    char why[TCP_WHY];
    if (p->server) {
        struct tcp_config seen;
        if (tcp_server_session(&p->listener, cfg.timeout_s, cfg.timeout_s, &hook, &seen, why, sizeof why))
            cbk_fail(c, CBK_EXIT_FAILED, "tcp: pair %d server (rank %d): %s", p->pair, c->rank, why);
        p->result->cfg = cfg;
    } else {
        tcp_result_free(p->result);
        if (tcp_client_session(&cfg, p->server_addr, p->server_port, "", &hook, p->result, why, sizeof why))
            cbk_fail(c, CBK_EXIT_FAILED, "tcp: pair %d client (rank %d) to %s: %s", p->pair, c->rank, p->server_addr, why);
    }
    if (cfg.test == TCP_TEST_RR) {
        report_direction(c, a, p, true);
        return 0;
    }
    if (cfg.dir != TCP_DIR_REVERSE)
        report_direction(c, a, p, true);
    if (cfg.dir != TCP_DIR_SEND)
        report_direction(c, a, p, false);
    return 0;
}

#endif
