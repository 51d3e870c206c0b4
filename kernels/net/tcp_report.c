/* Records of the tcp kernel. Rates are decimal Gbit/s (bits / 1e9, as
 * network people and iperf3 count) with MiB/s (bytes / 2^20) beside; every
 * figure is counted by the receiver. One measurement record per direction
 * (phase "send": client->server, "receive": server->client) or per rr test,
 * then one "tcp_streams" record with each connection and the per-interval
 * series. */
#include "tcp.h"

#include "../core/record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double gbit(uint64_t bytes, double seconds) { return seconds > 0 ? (double)bytes * 8.0 / seconds / 1e9 : 0.0; }
static double mib(uint64_t bytes, double seconds) { return seconds > 0 ? (double)bytes / seconds / 1048576.0 : 0.0; }
static double or_null(double v) { return v >= 0 ? v : NAN; }

double tcp_pair_nominal_gbit(const struct tcp_result *r, double link_speed_arg)
{
    if (link_speed_arg > 0)
        return link_speed_arg;
    double a = r->client_link_gbit, b = r->server_link_gbit;
    if (a > 0 && b > 0)
        return a < b ? a : b;
    return a > 0 ? a : b > 0 ? b : -1;
}

/* Receiver and sender of connection k. */
static const struct tcp_side *receiver(const struct tcp_result *r, uint32_t k)
{
    return tcp_client_sends(&r->cfg, k) ? &r->remote[k] : &r->local[k];
}
static const struct tcp_side *sender(const struct tcp_result *r, uint32_t k)
{
    return tcp_client_sends(&r->cfg, k) ? &r->local[k] : &r->remote[k];
}

bool tcp_direction_total(const struct tcp_result *r, bool client_sends, struct tcp_direction_total *t)
{
    memset(t, 0, sizeof *t);
    t->min_stream_gbit = INFINITY;
    for (uint32_t k = 0; k < r->conns; k++) {
        if (tcp_client_sends(&r->cfg, k) != client_sends)
            continue;
        const struct tcp_side *rx = receiver(r, k), *tx = sender(r, k);
        t->streams++;
        t->bytes += rx->bytes;
        t->sender_bytes += tx->bytes;
        t->calls += tx->calls;
        t->retransmits += tx->retransmits;
        t->rtt_us_mean += (double)tx->rtt_us;
        t->zerocopy_copied |= tx->zerocopy_copied;
        if (rx->seconds > t->seconds)
            t->seconds = rx->seconds;
        double g = gbit(rx->bytes, rx->seconds);
        if (g < t->min_stream_gbit)
            t->min_stream_gbit = g;
        if (g > t->max_stream_gbit)
            t->max_stream_gbit = g;
    }
    if (t->streams)
        t->rtt_us_mean /= t->streams;
    return t->streams > 0;
}

static void common_fields(struct cbk_phase *p, const struct tcp_result *r, const char *server, double nominal)
{
    cbk_phase_field(p, CBK_U64("streams", r->cfg.streams));
    cbk_phase_field(p, CBK_REAL("duration_s", r->cfg.duration_s));
    cbk_phase_field(p, CBK_BOOL("nodelay", r->cfg.nodelay));
    cbk_phase_field(p, CBK_TEXT("server", server));
    cbk_phase_field(p, CBK_TEXT("server_host", r->server_host));
    cbk_phase_field(p, CBK_TEXT("peer", r->peer));
    cbk_phase_field(p, CBK_TEXT("interface", r->ifname[0] ? r->ifname : NULL));
    cbk_phase_field(p, CBK_REAL("link_gbit_per_s", or_null(nominal)));
    cbk_phase_field(p, CBK_REAL("start_realtime", r->start_realtime));
}

void tcp_stream_phase(struct cbk_phase *p, const struct tcp_result *r, bool client_sends,
                      const struct tcp_direction_total *t, const char *server, double nominal, double epoch_s)
{
    memset(p, 0, sizeof *p);
    p->phase = client_sends ? "send" : "receive";
    cbk_phase_qualifier(p, "rate_basis", "receiver");
    p->bytes = t->bytes;
    p->ops = t->calls;
    p->begin_s = r->start_s - epoch_s;
    p->end_s = p->begin_s + t->seconds;
    p->value_unit = "Gbit/s";
    p->value = (double)t->bytes * 8.0 / 1e9;
    double rate = gbit(t->bytes, t->seconds);
    cbk_phase_field(p, CBK_REAL("mib_per_s", mib(t->bytes, t->seconds)));
    common_fields(p, r, server, nominal);
    cbk_phase_field(p, CBK_TEXT("direction", r->cfg.dir == TCP_DIR_BIDIR ? "bidir"
                                             : r->cfg.dir == TCP_DIR_REVERSE ? "reverse" : "send"));
    cbk_phase_field(p, CBK_U64("message_bytes", r->cfg.message_bytes));
    cbk_phase_field(p, CBK_U64("receive_batch_bytes", r->cfg.receive_batch_bytes));
    cbk_phase_field(p, CBK_U64("sender_bytes", t->sender_bytes));
    cbk_phase_field(p, CBK_U64("retransmits", t->retransmits));
    cbk_phase_field(p, CBK_REAL("rtt_us", t->rtt_us_mean));
    cbk_phase_field(p, CBK_REAL("stream_gbit_per_s_min", t->min_stream_gbit));
    cbk_phase_field(p, CBK_REAL("stream_gbit_per_s_max", t->max_stream_gbit));
    cbk_phase_field(p, CBK_U64("sndbuf_bytes", r->cfg.sndbuf_bytes));
    cbk_phase_field(p, CBK_U64("rcvbuf_bytes", r->cfg.rcvbuf_bytes));
    cbk_phase_field(p, CBK_BOOL("zerocopy", r->cfg.zerocopy));
    cbk_phase_field(p, CBK_REAL("link_ratio", nominal > 0 ? rate / nominal : NAN));
    if (r->cfg.zerocopy && t->zerocopy_copied)
        cbk_phase_warn(p, "MSG_ZEROCOPY fell back to copying (loopback, or a device without scatter-gather)");
    if (nominal > 0 && rate > 1.02 * nominal)
        cbk_phase_warn(p, "faster than the nominal link speed: the path does not go through that link (loopback, same host), or --link-speed is wrong");
}

/* Rate per interval of one side. The last interval is usually partial;
 * when shorter than half an interval it is folded into the one before,
 * since a few milliseconds of draining buffered data would otherwise show
 * as a spike. */
void tcp_interval_rates(const uint64_t *counts, uint32_t n, double seconds, double interval_s, bool transactions,
                        double *out, uint32_t *out_n)
{
    uint32_t m = n;
    double last_len = seconds - (double)(n ? n - 1 : 0) * interval_s;
    if (last_len > interval_s)
        last_len = interval_s;
    bool fold = n >= 2 && last_len < 0.5 * interval_s;
    if (fold)
        m = n - 1;
    for (uint32_t i = 0; i < m; i++) {
        double len = interval_s;
        double c = (double)counts[i];
        if (i + 1 == m) {
            len = fold ? interval_s + last_len : (i + 1 == n ? (last_len > 0 ? last_len : interval_s) : interval_s);
            if (fold)
                c += (double)counts[n - 1];
        }
        out[i] = transactions ? c / len : c * 8.0 / len / 1e9;
    }
    *out_n = m;
}

/* Returns how many intervals the series has (a short last one folded in). */
static uint32_t write_interval_series(struct cbk_json *j, const char *key, const struct tcp_side *s, double interval_s,
                                      bool transactions)
{
    double *v = malloc((s->intervals + 1) * sizeof *v);
    uint32_t n = 0;
    if (v)
        tcp_interval_rates(s->interval_bytes, s->intervals, s->seconds, interval_s, transactions, v, &n);
    cbk_json_array(j, key);
    for (uint32_t i = 0; i < n; i++)
        cbk_json_real(j, NULL, v[i]);
    cbk_json_close(j);
    free(v);
    return n;
}

/* The sender's retransmits, one entry per interval of the receiver's rate
 * series: what falls after its last interval (the short tail it folded in,
 * or a sender that counted more intervals) goes into the last entry, so
 * entry i is the retransmits of rate i (they were one longer at the end). */
static void write_retransmit_series(struct cbk_json *j, const struct tcp_side *tx, uint32_t rates)
{
    cbk_json_array(j, "intervals_retransmits");
    uint64_t last = 0;
    for (uint32_t i = 0; i < tx->intervals || (rates && i < rates); i++) {
        uint64_t n = i < tx->intervals ? tx->interval_retrans[i] : 0;
        if (rates && i + 1 >= rates)
            last += n;
        else if (i < rates)
            cbk_json_u64(j, NULL, n);
    }
    if (rates)
        cbk_json_u64(j, NULL, last);
    cbk_json_close(j);
}

static void write_streams(struct cbk_ctx *c, const struct tcp_result *r)
{
    const struct tcp_config *cfg = &r->cfg;
    bool rr = cfg->test == TCP_TEST_RR;
    struct cbk_json j;
    cbk_record_begin(&j, c->out, c, "tcp_streams");
    cbk_json_i64(&j, "repetition", c->repetition);
    cbk_json_text(&j, "test", rr ? "rr" : "stream");
    cbk_json_real(&j, "interval_s", cfg->interval_s);
    cbk_json_array(&j, "streams");
    for (uint32_t k = 0; k < r->conns; k++) {
        const struct tcp_side *rx = rr ? &r->local[k] : receiver(r, k), *tx = rr ? &r->local[k] : sender(r, k);
        cbk_json_object(&j, NULL);
        cbk_json_u64(&j, "stream", k);
        cbk_json_text(&j, "direction", rr ? "rr" : tcp_client_sends(cfg, k) ? "send" : "receive");
        cbk_json_u64(&j, "bytes", rx->bytes);
        cbk_json_real(&j, "seconds", rx->seconds);
        if (rr) {
            cbk_json_u64(&j, "transactions", rx->calls);
            cbk_json_real(&j, "transactions_per_s", rx->seconds > 0 ? (double)rx->calls / rx->seconds : 0);
            write_interval_series(&j, "intervals_transactions_per_s", rx, cfg->interval_s, true);
        } else {
            cbk_json_real(&j, "gbit_per_s", gbit(rx->bytes, rx->seconds));
            cbk_json_real(&j, "mib_per_s", mib(rx->bytes, rx->seconds));
            cbk_json_u64(&j, "sender_bytes", tx->bytes);
            cbk_json_u64(&j, "receiver_calls", rx->calls);  /* recv() calls: bytes / calls shows the batching */
            cbk_json_u64(&j, "sender_sndbuf_bytes", tx->sndbuf_bytes);
            cbk_json_u64(&j, "receiver_rcvbuf_bytes", rx->rcvbuf_bytes);
            write_retransmit_series(&j, tx, write_interval_series(&j, "intervals_gbit_per_s", rx, cfg->interval_s,
                                                                   false));
        }
        cbk_json_u64(&j, "retransmits", tx->retransmits);
        cbk_json_u64(&j, "rtt_us", tx->rtt_us);
        cbk_json_close(&j);
    }
    cbk_json_close(&j);
    cbk_record_end(&j, c);
}

void tcp_report_stream(struct cbk_ctx *c, const struct tcp_result *r, const char *server, double link_speed_arg)
{
    double nominal = tcp_pair_nominal_gbit(r, link_speed_arg);
    for (int d = 0; d < 2; d++) {
        struct tcp_direction_total t;
        if (!tcp_direction_total(r, d == 0, &t))
            continue;
        struct cbk_phase p;
        tcp_stream_phase(&p, r, d == 0, &t, server, nominal, c->epoch_s);
        cbk_report(c, &p);
    }
    if (c->rank == 0)
        write_streams(c, r);
}

/* A tenth, as the pairs' start spread: below it the overrun is the last
 * transaction's usual share of the run. The run is not refused up front:
 * how long a transaction takes depends on the path, known only once run. */
const char *tcp_rr_overrun(const struct tcp_config *c, double seconds, double longest_transaction_s, char *buf,
                           size_t len)
{
    if (seconds <= 1.1 * c->duration_s)
        return NULL;
    snprintf(buf, len, "the client ran %.3g s, past --duration=%g s: no request starts after the duration, but the "
             "one in flight finishes, and the longest transaction took %.3g s (give a smaller --request-size or "
             "--response-size, or a longer --duration)", seconds, c->duration_s, longest_transaction_s);
    return buf;
}

void tcp_report_rr(struct cbk_ctx *c, const struct tcp_result *r, const char *server, double link_speed_arg)
{
    const struct cbk_histogram *h = &r->latency;
    uint64_t transactions = 0, retrans = 0;
    double seconds = 0, rtt = 0;
    for (uint32_t k = 0; k < r->conns; k++) {
        transactions += r->local[k].calls;
        retrans += r->local[k].retransmits + r->remote[k].retransmits;
        rtt += (double)r->local[k].rtt_us;
        if (r->local[k].seconds > seconds)
            seconds = r->local[k].seconds;
    }
    struct cbk_phase p = { .phase = "rr" };
    cbk_phase_qualifier(&p, "rate_basis", "round-trip");
    p.bytes = transactions * (r->cfg.request_bytes + r->cfg.response_bytes);
    p.ops = transactions;
    p.begin_s = r->start_s - c->epoch_s;
    p.end_s = p.begin_s + seconds;
    p.value_unit = "transactions/s";
    p.value = (double)transactions;
    common_fields(&p, r, server, tcp_pair_nominal_gbit(r, link_speed_arg));
    cbk_phase_field(&p, CBK_U64("request_bytes", r->cfg.request_bytes));
    cbk_phase_field(&p, CBK_U64("response_bytes", r->cfg.response_bytes));
    cbk_phase_field(&p, CBK_U64("latency_samples", cbk_histogram_count(h)));
    cbk_phase_field(&p, CBK_REAL("latency_us_mean", cbk_histogram_mean(h) / 1e3));
    cbk_phase_field(&p, CBK_REAL("latency_us_min", (double)cbk_histogram_min(h) / 1e3));
    cbk_phase_field(&p, CBK_REAL("latency_us_p50", (double)cbk_histogram_percentile(h, 50) / 1e3));
    cbk_phase_field(&p, CBK_REAL("latency_us_p90", (double)cbk_histogram_percentile(h, 90) / 1e3));
    cbk_phase_field(&p, CBK_REAL("latency_us_p99", (double)cbk_histogram_percentile(h, 99) / 1e3));
    cbk_phase_field(&p, CBK_REAL("latency_us_p99_9", (double)cbk_histogram_percentile(h, 99.9) / 1e3));
    cbk_phase_field(&p, CBK_REAL("latency_us_max", (double)cbk_histogram_max(h) / 1e3));
    cbk_phase_field(&p, CBK_U64("retransmits", retrans));
    cbk_phase_field(&p, CBK_REAL("rtt_us", r->conns ? rtt / r->conns : 0));
    if (transactions == 0)
        cbk_phase_warn(&p, "no transaction completed within the duration");
    char overrun[320];
    if (tcp_rr_overrun(&r->cfg, seconds, (double)cbk_histogram_max(h) / 1e9, overrun, sizeof overrun))
        cbk_phase_warn(&p, overrun);
    cbk_report(c, &p);
    if (c->rank == 0)
        write_streams(c, r);
}
