/* tcp: network throughput (parallel streams, either direction or both) and
 * request/response latency between a client and a server (E2, E5, E6).
 *
 * Roles: `server` waits for one client session and exits; `client` runs the
 * test against --server; `loopback` runs both in one process over
 * 127.0.0.1; `pairs` (MPI builds) runs N client/server pairs at one agreed
 * moment: rank i < N serves, rank i + N connects to rank i. Without MPI,
 * concurrent pairs are separate clients given one --start-at.
 *
 * The files: tcp_session.c (control protocol, both sides), tcp_stream.c and
 * tcp_rr.c (timed loops), tcp_socket.c (bounded socket calls),
 * tcp_control.c (messages), tcp_report.c (records), tcp_pairs.c (MPI). */
#include "tcp.h"

#include "../core/buffer.h"
#include "../core/params.h"
#include "../core/pattern.h"
#include "../core/record.h"
#include "../core/threads.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const role_names[] = { "loopback", "server", "client", "pairs", NULL };
static const char *const test_names[] = { "stream", "rr", NULL };
static const char *const pairing_names[] = { "halves", "adjacent", NULL };
static const char *const direction_names[] = { "send", "reverse", "bidir", NULL };

#define OPT struct tcp_options

static const struct cbk_param params[] = {
    { .name = "role", CBK_AT_CHOICE(OPT, role, role_names), .default_value = "loopback",
      .help = "loopback = server and client in this process over 127.0.0.1; server = wait for one client session, then exit; "
              "client = test against --server; pairs = under MPI, rank i < N serves and rank i+N connects to it, all pairs start together" },
    { .name = "test", CBK_AT_CHOICE(OPT, test, test_names), .default_value = "stream",
      .help = "stream = throughput for --duration; rr = request/response transactions (netperf TCP_RR): rate and latency percentiles" },
    { .name = "server", CBK_AT_STRING(OPT, server), .default_value = "auto", .keyword = "auto", .role = CBK_ROLE_WHERE,
      .help = "client: the server's address or host name (required); pairs: comma-separated address of each pair's server, "
              "or auto = each server tells its client its addresses over MPI and the client picks one on a shared subnet" },
    { .name = "port", CBK_AT_INT(OPT, port), .default_value = "5301", .min = "0", .max = "65535", .role = CBK_ROLE_WHERE,
      .help = "TCP port of the server, for the control and the data connections; 0 (server, loopback, pairs) = any free port, "
              "printed in the server's `listening` record; pairs: server rank i uses port+i" },
    { .name = "pairing", CBK_AT_CHOICE(OPT, pairing, pairing_names), .default_value = "halves",
      .help = "pairs: halves = rank i < N serves rank i+N (hostfile: all servers, then all clients); "
              "adjacent = rank 2i serves rank 2i+1 (hostfile: server, client, server, client, ...)" },
    { .name = "bind", CBK_AT_STRING(OPT, bind), .default_value = "any", .keyword = "any", .role = CBK_ROLE_WHERE,
      .help = "local address to listen on (server, pairs servers) or to connect from (client); any = all addresses / the kernel's choice" },
    { .name = "duration", CBK_AT_REAL(OPT, duration), .default_value = "10", .unit = "s", .min = "0.01", .max = "86400",
      .help = "how long the senders send (stream) or the client starts requests (rr: the transaction in flight "
              "finishes, and the record warns when that ran more than a tenth past the duration)" },
    { .name = "streams", CBK_AT_INT(OPT, streams), .default_value = "1", .unit = "count", .min = "1", .max = "128",
      .help = "parallel data connections per direction, one thread each (rr: concurrent request/response connections)" },
    { .name = "message-size", CBK_AT_SIZE(OPT, message_size), .default_value = "128k", .unit = "bytes", .min = "1", .max = "1g",
      .help = "stream: bytes per send() call, and per recv() call when larger than --receive-batch (iperf3's --length)" },
    { .name = "receive-batch", CBK_AT_STRING(OPT, receive_batch), .default_value = "auto", .keyword = "auto", .unit = "bytes",
      .help = "stream: the receiver is woken once this many bytes wait (SO_RCVLOWAT; at end of stream, or when the "
              "window fills, at once) and reads up to this many per recv(); 0 = woken for every arriving segment, as "
              "iperf3; at most 16m; auto = 1m when --streams is at most the CPUs this process may use, else 0 "
              "(a wake-up costs the CPU delivering the data an interrupt when the receiver sleeps on another CPU; with "
              "more streams than CPUs it mostly does not, and data read at once is still in cache)" },
    { .name = "direction", CBK_AT_CHOICE(OPT, direction, direction_names), .default_value = "send",
      .help = "stream: send = client to server; reverse = server to client; bidir = both at once, --streams each way" },
    { .name = "nodelay", CBK_AT_BOOL(OPT, nodelay), .default_value = "false",
      .help = "set TCP_NODELAY on the data connections (Nagle's algorithm off)" },
    { .name = "sndbuf", CBK_AT_SIZE(OPT, sndbuf), .default_value = "0", .unit = "bytes", .max = "1g",
      .help = "SO_SNDBUF of the data connections, both sides; 0 = kernel autotuning (the kernel doubles a value set)" },
    { .name = "rcvbuf", CBK_AT_SIZE(OPT, rcvbuf), .default_value = "0", .unit = "bytes", .max = "1g",
      .help = "SO_RCVBUF of the data connections, both sides, set before connecting; 0 = kernel autotuning" },
    { .name = "zerocopy", CBK_AT_BOOL(OPT, zerocopy), .default_value = "false",
      .help = "stream: senders use MSG_ZEROCOPY (Linux >= 4.14); a record warns when the kernel copied anyway" },
    { .name = "request-size", CBK_AT_SIZE(OPT, request_size), .default_value = "1", .unit = "bytes", .min = "1", .max = "1g",
      .help = "rr: bytes the client sends per transaction" },
    { .name = "response-size", CBK_AT_SIZE(OPT, response_size), .default_value = "1", .unit = "bytes", .min = "1", .max = "1g",
      .help = "rr: bytes the server answers per transaction" },
    { .name = "interval", CBK_AT_REAL(OPT, interval), .default_value = "1", .unit = "s", .min = "0.01", .max = "3600",
      .help = "length of the intervals of the per-interval series in the tcp_streams record" },
    { .name = "timeout", CBK_AT_REAL(OPT, timeout), .default_value = "10", .unit = "s", .min = "0.1", .max = "3600",
      .help = "longest wait for the peer: connecting, each control message, any send()/recv() without progress; "
              "a dead or unreachable peer is an error after at most this long" },
    { .name = "idle-timeout", CBK_AT_REAL(OPT, idle_timeout), .default_value = "600", .unit = "s", .min = "0", .max = "31536000",
      .help = "server: how long to wait for a client to start a test before giving up (0 = forever)" },
    { .name = "start-at", CBK_AT_REAL(OPT, start_at), .default_value = "0", .unit = "s since 1970-01-01 UTC", .min = "0",
      .help = "client: start the test at this CLOCK_REALTIME moment (date +%s.%N), so clients on several hosts run "
              "concurrently; 0 = as soon as connected" },
    { .name = "link-speed", CBK_AT_REAL(OPT, link_speed), .default_value = "0", .unit = "Gbit/s", .min = "0", .max = "100000",
      .help = "nominal speed of one pair's path for the link_ratio figure; 0 = the slower NIC of the two hosts from "
              "/sys/class/net/<if>/speed, when known" },
    { .name = "shared-link-speed", CBK_AT_REAL(OPT, shared_link_speed), .default_value = "0", .unit = "Gbit/s", .min = "0",
      .max = "100000",
      .help = "pairs: nominal speed of a link every pair crosses (the trunk between two switches, E6); the tcp_pairs "
              "record rates the aggregate against it too; 0 = none" },
    { 0 },
};

struct tcp_state {
    struct tcp_listener listener;
    struct tcp_result *result;
    void *pairs;
};

/* The rank count is known only once MPI runs: `cbk --check` validates as
 * one process before the launch, and must not judge it. */
static bool ranks_known(void)
{
#ifdef CBK_HAVE_MPI
    int up = 0;
    MPI_Initialized(&up);
    return up;
#else
    return true;
#endif
}

static uint64_t receive_batch(const struct cbk_args *a);

/* Every data connection has a buffer at each end it has in this process,
 * touched as it is made (crew_start): a product past memory met the OOM
 * killer, or failed as the server's 'out of memory' seen by the client. */
static int check_buffers(const struct cbk_args *a, const struct cbk_ctx *c, char *why, size_t len)
{
    const struct tcp_options *o = tcp_options(a);
    bool rr = o->test == TCP_TEST_RR;
    uint64_t batch = rr ? 0 : receive_batch(a);
    const char *name = rr ? (o->request_size >= o->response_size ? "--request-size" : "--response-size")
                          : (o->message_size >= batch ? "--message-size" : "--receive-batch");
    uint64_t conn_bytes = rr ? (o->request_size >= o->response_size ? o->request_size : o->response_size)
                             : (o->message_size >= batch ? o->message_size : batch);
    uint64_t ways = !rr && o->direction == TCP_DIR_BIDIR ? 2 : 1, ends = o->role == TCP_ROLE_LOOPBACK ? 2 : 1;
    char what[200], size[32];
    snprintf(what, sizeof what, "--streams=%lld%s x %s=%s%s", (long long)o->streams, ways > 1 ? " x 2 directions" : "",
             name, cbk_format_size(conn_bytes, size, sizeof size),
             ends > 1 ? " x 2 ends (client and server in this process)" : "");
    return cbk_check_memory(what, (uint64_t)o->streams * ways * ends * conn_bytes, c->node_size, why, len);
}

static int validate(const struct cbk_args *a, struct cbk_ctx *c, char *why, size_t len)
{
    enum tcp_role role = tcp_options(a)->role;
    bool rr = tcp_options(a)->test == TCP_TEST_RR;
    double duration = tcp_options(a)->duration, start_at = tcp_options(a)->start_at;
    if (role == TCP_ROLE_CLIENT && !tcp_options(a)->server) {
        snprintf(why, len, "role=client needs --server=ADDRESS (the host running cbk tcp --role=server)");
        return -1;
    }
    if ((role == TCP_ROLE_SERVER || role == TCP_ROLE_LOOPBACK) && tcp_options(a)->server) {
        /* ignored in silence, a server given --server=X listened on every address, not X */
        snprintf(why, len, "--server is the client's (the address it connects to); a %s listens on --bind=ADDRESS",
                 role == TCP_ROLE_SERVER ? "server" : "loopback run");
        return -1;
    }
    if (role == TCP_ROLE_CLIENT && tcp_options(a)->port == 0) {
        snprintf(why, len, "role=client needs the server's --port (0 means any free port, for servers only)");
        return -1;
    }
    if (role == TCP_ROLE_PAIRS) {
#ifndef CBK_HAVE_MPI
        snprintf(why, len, "role=pairs needs cbk built with MPI; without MPI run one server and one client per pair "
                           "and give every client the same --start-at");
        return -1;
#else
        if (ranks_known() && (c->size < 2 || c->size % 2)) {
            snprintf(why, len, "role=pairs needs an even number of ranks (a server and a client per pair), got %d", c->size);
            return -1;
        }
        const char *list = tcp_options(a)->server;
        if (list) {
            int n = 1;
            for (const char *p = list; *p; p++)
                n += *p == ',';
            if (ranks_known() && n != c->size / 2) {
                snprintf(why, len, "--server lists %d addresses for %d pairs", n, c->size / 2);
                return -1;
            }
        }
#endif
    } else if (ranks_known() && c->size > 1) {
        snprintf(why, len, "role=%s runs in one process; under MPI use role=pairs", role_names[role]);
        return -1;
    }
    uint64_t batch;
    const char *batch_text = tcp_options(a)->receive_batch;
    if (batch_text && (cbk_parse_size(batch_text, &batch) || batch > TCP_MAX_RECEIVE_BATCH)) {
        snprintf(why, len, "--receive-batch=%s: give a size up to 16m (0 = no batching) or auto", batch_text);
        return -1;
    }
    if (rr && tcp_options(a)->zerocopy) {
        snprintf(why, len, "--zerocopy applies to test=stream only");
        return -1;
    }
    if (rr && tcp_options(a)->direction != TCP_DIR_SEND) {
        snprintf(why, len, "--direction applies to test=stream only (rr: the client sends requests, the server answers)");
        return -1;
    }
    if (duration / tcp_options(a)->interval > 1e6) {
        snprintf(why, len, "--duration=%g with --interval=%g makes more than a million intervals", duration,
                 tcp_options(a)->interval);
        return -1;
    }
    if (start_at > 0) {
        double now = tcp_realtime();
        if (role != TCP_ROLE_CLIENT) {
            snprintf(why, len, "--start-at applies to role=client (pairs start together by MPI barrier)");
            return -1;
        }
        if (a->common.repetitions != 1) {
            snprintf(why, len, "--start-at fixes one moment: run one repetition per invocation");
            return -1;
        }
        if (start_at > now + 86400 || start_at < now - 3600) {
            snprintf(why, len, "--start-at=%.3f is %.0f s from now: give CLOCK_REALTIME seconds since 1970 (date +%%s)",
                     start_at, start_at - now);
            return -1;
        }
    }
    return check_buffers(a, c, why, len);
}

const char *tcp_bind_arg(const struct cbk_args *a)
{
    const char *b = tcp_options(a)->bind;
    return b ? b : "";
}

/* auto: batching saves the interrupt that wakes a receiver sleeping on
 * another CPU, which is where a receiver sleeps while each stream can have
 * a CPU of its own. Measured on loopback, 2 vCPU (docs/kernels/tcp.md):
 * 1 and 2 streams +30-45 %, 3 level, 4 streams -20 %. */
static uint64_t receive_batch(const struct cbk_args *a)
{
    uint64_t batch = 0;
    const char *text = tcp_options(a)->receive_batch;
    if (text) {
        cbk_parse_size(text, &batch);  /* validated */
        return batch;
    }
    cpu_set_t cpus;
    long n = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : sysconf(_SC_NPROCESSORS_ONLN);
    return tcp_options(a)->streams <= n ? TCP_AUTO_RECEIVE_BATCH : 0;
}

void tcp_config_from_args(const struct cbk_args *a, struct tcp_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->test = tcp_options(a)->test;
    cfg->dir = tcp_options(a)->direction;
    cfg->streams = (uint32_t)tcp_options(a)->streams;
    cfg->message_bytes = tcp_options(a)->message_size;
    cfg->receive_batch_bytes = receive_batch(a);
    cfg->request_bytes = tcp_options(a)->request_size;
    cfg->response_bytes = tcp_options(a)->response_size;
    cfg->sndbuf_bytes = tcp_options(a)->sndbuf;
    cfg->rcvbuf_bytes = tcp_options(a)->rcvbuf;
    cfg->duration_s = tcp_options(a)->duration;
    cfg->interval_s = tcp_options(a)->interval;
    cfg->timeout_s = tcp_options(a)->timeout;
    cfg->start_at = tcp_options(a)->start_at;
    cfg->nodelay = tcp_options(a)->nodelay;
    cfg->zerocopy = tcp_options(a)->zerocopy;
    cfg->cookie = cbk_random_u64();
}

/* Tells whoever started the server (a script, a test) where it listens. */
static void print_listening(struct cbk_ctx *c, const struct tcp_listener *l)
{
    struct cbk_json j;
    cbk_record_begin(&j, c->out, c, "listening");
    cbk_json_text(&j, "bind", l->bind[0] ? l->bind : NULL);
    cbk_json_i64(&j, "port", l->port);
    cbk_record_end(&j, c);
}

static int setup(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct tcp_state *s = calloc(1, sizeof *s);
    if (!s || !(s->result = calloc(1, sizeof *s->result)))
        cbk_fail(c, CBK_EXIT_FAILED, "tcp: out of memory");
    c->state = s;
    s->listener.fd = -1;
    enum tcp_role role = tcp_options(a)->role;
    char why[TCP_WHY];
    if (role == TCP_ROLE_SERVER || role == TCP_ROLE_LOOPBACK) {
        const char *bind = role == TCP_ROLE_LOOPBACK ? "127.0.0.1" : tcp_bind_arg(a);
        if (tcp_listen(&s->listener, bind, (int)tcp_options(a)->port, why, sizeof why))
            cbk_fail(c, CBK_EXIT_FAILED, "tcp: %s", why);
        if (role == TCP_ROLE_SERVER)
            print_listening(c, &s->listener);
    } else if (role == TCP_ROLE_PAIRS) {
        return tcp_pairs_setup(a, c, &s->pairs);
    }
    return 0;
}

static int wait_start_at(void *arg, char *why, size_t len)
{
    double at = *(const double *)arg, now = tcp_realtime();
    /* A pair that starts late does not run concurrently with the others:
     * a failure, not a quiet overlap of part of the test. */
    if (now > at + 0.1) {
        snprintf(why, len, "--start-at=%.3f had passed %.3f s before this client was connected: give a later start time",
                 at, now - at);
        return -1;
    }
    struct timespec ts = { .tv_sec = (time_t)at, .tv_nsec = (long)((at - floor(at)) * 1e9) };
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
    return 0;
}

static void report(struct cbk_ctx *c, const struct tcp_result *r, const char *server, double link_speed)
{
    if (r->cfg.test == TCP_TEST_RR)
        tcp_report_rr(c, r, server, link_speed);
    else
        tcp_report_stream(c, r, server, link_speed);
}

static int run_server(const struct cbk_args *a, struct cbk_ctx *c, struct tcp_state *s)
{
    double timeout = tcp_options(a)->timeout, wait = tcp_options(a)->idle_timeout;
    char why[TCP_WHY];
    /* one run() serves one client's whole set of repetitions */
    for (;;) {
        struct tcp_config seen;
        if (tcp_server_session(&s->listener, wait, timeout, NULL, &seen, why, sizeof why))
            cbk_fail(c, CBK_EXIT_FAILED, "tcp server: %s", why);
        if (seen.repetition + 1 >= seen.repetitions)
            return 0;
        wait = seen.timeout_s;
    }
}

static int run_client(const struct cbk_args *a, struct cbk_ctx *c, struct tcp_state *s)
{
    struct tcp_config cfg;
    tcp_config_from_args(a, &cfg);
    cfg.repetition = c->repetition;
    cfg.repetitions = (int32_t)a->common.repetitions;
    double at = cfg.start_at;
    struct tcp_hook hook = { .before_start = wait_start_at, .arg = &at };
    char why[TCP_WHY];
    const char *server = tcp_options(a)->server;
    tcp_result_free(s->result);
    if (tcp_client_session(&cfg, server, (int)tcp_options(a)->port, tcp_bind_arg(a),
                           at > 0 ? &hook : NULL, s->result, why, sizeof why))
        cbk_fail(c, CBK_EXIT_FAILED, "tcp: %s", why);
    report(c, s->result, server, tcp_options(a)->link_speed);
    return 0;
}

struct loopback_server {
    struct tcp_listener *listener;
    double timeout_s;
    int rc;
    char why[TCP_WHY];
};

static void *loopback_server_main(void *arg)
{
    struct loopback_server *ls = arg;
    struct tcp_config seen;
    ls->rc = tcp_server_session(ls->listener, ls->timeout_s, ls->timeout_s, NULL, &seen, ls->why, sizeof ls->why);
    return NULL;
}

static int run_loopback(const struct cbk_args *a, struct cbk_ctx *c, struct tcp_state *s)
{
    struct tcp_config cfg;
    tcp_config_from_args(a, &cfg);
    cfg.repetition = 0;
    cfg.repetitions = 1;
    struct loopback_server ls = { .listener = &s->listener, .timeout_s = cfg.timeout_s };
    struct cbk_threads server = { 0 };
    int rc = cbk_threads_start(&server, 1, loopback_server_main, &ls, sizeof ls);
    if (rc)
        cbk_fail(c, CBK_EXIT_FAILED, "tcp: cannot start the server thread: %s", strerror(rc));
    char why[TCP_WHY];
    tcp_result_free(s->result);
    int client_rc = tcp_client_session(&cfg, "127.0.0.1", s->listener.port, "", NULL, s->result, why, sizeof why);
    cbk_threads_join(&server);
    /* The client's message includes what the server reported; a server
     * error alone means the client never got far enough to hear it. */
    if (client_rc)
        cbk_fail(c, CBK_EXIT_FAILED, "tcp: %s", why);
    if (ls.rc)
        cbk_fail(c, CBK_EXIT_FAILED, "tcp loopback server: %s", ls.why);
    report(c, s->result, "127.0.0.1", tcp_options(a)->link_speed);
    return 0;
}

static int run(const struct cbk_args *a, struct cbk_ctx *c)
{
    struct tcp_state *s = c->state;
    enum tcp_role role = tcp_options(a)->role;
    if (role == TCP_ROLE_SERVER)
        return run_server(a, c, s);
    if (role == TCP_ROLE_CLIENT)
        return run_client(a, c, s);
    if (role == TCP_ROLE_PAIRS)
        return tcp_pairs_run(a, c, s->pairs);
    return run_loopback(a, c, s);
}

static void teardown(const struct cbk_args *a, struct cbk_ctx *c)
{
    (void)a;
    struct tcp_state *s = c->state;
    if (!s)
        return;
    tcp_listener_close(&s->listener);
    if (s->pairs)
        tcp_pairs_teardown(c, s->pairs);
    tcp_result_free(s->result);
    free(s->result);
    free(s);
    c->state = NULL;
}

static const char *const detail_records[] = { "tcp_pairs", NULL };

/* "rr" in a report's table read as jargon: its phase in words (the records keep "rr") */
static const struct cbk_phase_words phase_words[] = { { "rr", "request/response" }, { NULL, NULL } };

const struct cbk_kernel cbk_kernel_tcp = {
    .name = "tcp",
    .phase_words = phase_words,
    .summary = "TCP throughput (parallel streams, both directions) and request/response latency; pairs started together (E2, E5, E6)",
    .family = CBK_FAMILY_NETWORK,
    .detail_records = detail_records,
    .flags = CBK_PARALLEL,
    .params = params,
    .options_size = sizeof(OPT),
    .validate = validate,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
