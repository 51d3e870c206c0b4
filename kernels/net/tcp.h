/* Shared by the files of the tcp kernel (tcp.c and tcp_*.c); nothing
 * outside kernels/net/ includes it.
 *
 * One test is a session between a client and a server: a control
 * connection carries the parameters, the start signal and the server's
 * counts; separate data connections carry the payload (stream test) or the
 * transactions (rr test). The receiver's count is the figure reported. */
#ifndef CBK_NET_TCP_H
#define CBK_NET_TCP_H

#include "../core/cbk.h"
#include "../core/histogram.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define TCP_MAX_STREAMS 128
#define TCP_MAX_CONNS (2 * TCP_MAX_STREAMS)
#define TCP_WHY 512           /* error text buffers */
#define TCP_HOST_LEN 256
#define TCP_PROTOCOL 2        /* bumped when the control protocol changes */
#define TCP_MAX_RECEIVE_BATCH (16u << 20)   /* the kernel caps SO_RCVLOWAT at half of tcp_rmem's maximum */
#define TCP_AUTO_RECEIVE_BATCH (1u << 20)
/* Latency histograms: 1 ns .. 1000 s, clamped outside. */
#define TCP_HIST_LOW_NS 1ull
#define TCP_HIST_HIGH_NS 1000000000000ull

enum tcp_test { TCP_TEST_STREAM, TCP_TEST_RR };
enum tcp_dir { TCP_DIR_SEND, TCP_DIR_REVERSE, TCP_DIR_BIDIR };

/* The kernel's parameters (tcp.c's table binds them; tcp_pairs.c reads
 * them too); the choice names in tcp.c are in these enums' order. */
enum tcp_role { TCP_ROLE_LOOPBACK, TCP_ROLE_SERVER, TCP_ROLE_CLIENT, TCP_ROLE_PAIRS };
enum tcp_pairing { TCP_PAIRING_HALVES, TCP_PAIRING_ADJACENT };
struct tcp_options {
    enum tcp_role role;
    enum tcp_test test;
    const char *server;
    int64_t port;
    enum tcp_pairing pairing;
    const char *bind;
    double duration;
    int64_t streams;
    uint64_t message_size;
    const char *receive_batch; /* a size, or NULL for auto */
    enum tcp_dir direction;
    bool nodelay;
    uint64_t sndbuf;
    uint64_t rcvbuf;
    bool zerocopy;
    uint64_t request_size;
    uint64_t response_size;
    double interval;
    double timeout;
    double idle_timeout;
    double start_at;
    double link_speed;
    double shared_link_speed;
};
static inline const struct tcp_options *tcp_options(const struct cbk_args *a) { return cbk_options(a); }

/* What client and server agree on; travels in the HELLO message. */
struct tcp_config {
    enum tcp_test test;
    enum tcp_dir dir;
    uint32_t streams;             /* per direction */
    uint64_t message_bytes;       /* stream: bytes per send() (and recv(), when larger than the batch) */
    uint64_t receive_batch_bytes; /* stream: receiver's SO_RCVLOWAT and recv() size; 0: woken per segment */
    uint64_t request_bytes, response_bytes; /* rr */
    uint64_t sndbuf_bytes, rcvbuf_bytes;    /* 0: kernel autotuning */
    double duration_s, interval_s, timeout_s;
    double start_at;              /* CLOCK_REALTIME seconds; 0: at once */
    bool nodelay, zerocopy;
    uint64_t cookie;              /* identifies this session's data connections */
    int32_t repetition, repetitions;
};

/* Data connections of a session: stream tests with direction bidir open
 * `streams` connections each way; the first half carries client->server. */
static inline uint32_t tcp_conns(const struct tcp_config *c)
{
    return c->streams * (c->test == TCP_TEST_STREAM && c->dir == TCP_DIR_BIDIR ? 2u : 1u);
}

/* True when the client is the sender on data connection k (rr: the
 * client sends the requests). */
static inline bool tcp_client_sends(const struct tcp_config *c, uint32_t k)
{
    if (c->test == TCP_TEST_RR || c->dir == TCP_DIR_SEND)
        return true;
    if (c->dir == TCP_DIR_REVERSE)
        return false;
    return k < c->streams;
}

/* Interval slots a side may fill: the test plus a drain of up to timeout. */
static inline uint32_t tcp_interval_slots(const struct tcp_config *c)
{
    return (uint32_t)((c->duration_s + c->timeout_s) / c->interval_s) + 2u;
}

/* One side of one data connection, as that side counted it. */
struct tcp_side {
    uint64_t bytes;            /* payload sent or received (rr: both ways) */
    uint64_t calls;            /* send()/recv() calls; rr: transactions */
    double seconds;            /* own start signal to own end (receiver: EOF) */
    uint64_t retransmits;      /* TCP_INFO tcpi_total_retrans (sender) */
    uint64_t rtt_us;           /* TCP_INFO tcpi_rtt at the end (sender) */
    uint64_t sndbuf_bytes, rcvbuf_bytes; /* as the kernel reports them */
    bool zerocopy_copied;      /* MSG_ZEROCOPY fell back to copying */
    uint32_t intervals;        /* slots filled */
    uint64_t *interval_bytes;  /* per interval: bytes (rr: transactions) */
    uint64_t *interval_retrans;/* per interval: retransmits (sender) */
};

int tcp_side_alloc(struct tcp_side *s, uint32_t slots);
void tcp_side_free(struct tcp_side *s);

/* The start gate the data threads of one side wait at. */
struct tcp_gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int state;                 /* 0 waiting, 1 go, -1 abort */
    double start_s;            /* cbk_clock() at the start signal */
};

/* One data connection on one side, run by one thread. */
struct tcp_worker {
    int fd;
    uint32_t index;
    bool sends;                /* this side sends on this connection */
    bool client;               /* this side is the client */
    const struct tcp_config *cfg;
    struct tcp_gate *gate;
    unsigned char *buf;
    size_t buf_bytes;
    struct tcp_side side;
    struct cbk_histogram latency; /* rr client: ns per transaction */
    char why[TCP_WHY];         /* empty unless this connection failed */
};

/* tcp_stream.c / tcp_rr.c: the timed loops, run by the worker thread after
 * the gate opens. 0, or -1 with w->why filled. */
int tcp_stream_send(struct tcp_worker *w, double start_s);
int tcp_stream_receive(struct tcp_worker *w, double start_s);
int tcp_rr_client(struct tcp_worker *w, double start_s);
int tcp_rr_server(struct tcp_worker *w, double start_s);

/* tcp_socket.c */
struct tcp_listener {
    int fd, port;
    char bind[TCP_HOST_LEN];
    uint64_t sndbuf_bytes, rcvbuf_bytes; /* applied to the listening socket */
};
int tcp_listen(struct tcp_listener *l, const char *bind, int port, char *why, size_t len);
/* Makes accepted sockets inherit these buffer sizes: they must be set
 * before the handshake for the window scale to match (recreates the
 * listening socket on the same port when a size has to be undone). */
int tcp_listener_buffers(struct tcp_listener *l, uint64_t sndbuf, uint64_t rcvbuf, char *why, size_t len);
void tcp_listener_close(struct tcp_listener *l);
/* wait_s <= 0: forever. */
int tcp_accept(struct tcp_listener *l, double wait_s, char *why, size_t len);
int tcp_connect(const char *host, int port, const char *bind, uint64_t sndbuf, uint64_t rcvbuf,
                double timeout_s, char *why, size_t len);
void tcp_control_options(int fd);
int tcp_data_options(int fd, const struct tcp_config *c, bool sends, char *why, size_t len);
/* Whole-buffer I/O bounded by timeout_s; 0, or -1 with why (EOF included). */
int tcp_read_full(int fd, void *buf, size_t n, double timeout_s, const char *what, char *why, size_t len);
int tcp_write_full(int fd, const void *buf, size_t n, double timeout_s, const char *what, char *why, size_t len);
void tcp_info_counts(int fd, uint64_t *retransmits, uint64_t *rtt_us);
void tcp_buffer_sizes(int fd, uint64_t *sndbuf, uint64_t *rcvbuf);
/* Nominal speed (Gbit/s) of the interface holding the socket's local
 * address, from /sys/class/net/<if>/speed; -1 when unknown (loopback,
 * virtual devices without a speed). The interface name goes to ifname. */
double tcp_link_speed_gbit(int fd, char *ifname, size_t len);
void tcp_peer_name(int fd, char *out, size_t len);
/* Non-loopback addresses of this host, comma separated (for MPI pairs). */
void tcp_local_addresses(char *out, size_t len);
/* The address in a comma-separated list that shares a subnet with one of
 * this host's interfaces; else the first. */
void tcp_pick_address(const char *list, char *out, size_t len);

/* tcp_control.c: length-prefixed text messages "TYPE\nkey=value\n...". */
struct tcp_msg {
    char *text;
    size_t len, cap;
};
void tcp_msg_begin(struct tcp_msg *m, const char *type);
void tcp_msg_u64(struct tcp_msg *m, const char *key, uint64_t v);
void tcp_msg_real(struct tcp_msg *m, const char *key, double v);
void tcp_msg_text(struct tcp_msg *m, const char *key, const char *v);
void tcp_msg_free(struct tcp_msg *m);
int tcp_msg_send(int fd, struct tcp_msg *m, double timeout_s, char *why, size_t len);
int tcp_msg_recv(int fd, struct tcp_msg *m, double timeout_s, const char *waiting_for, char *why, size_t len);
bool tcp_msg_is(const struct tcp_msg *m, const char *type);
int tcp_msg_get_u64(const struct tcp_msg *m, const char *key, uint64_t *v);
int tcp_msg_get_real(const struct tcp_msg *m, const char *key, double *v);
int tcp_msg_get_text(const struct tcp_msg *m, const char *key, char *out, size_t len);
void tcp_config_to_msg(struct tcp_msg *m, const struct tcp_config *c);
int tcp_config_from_msg(const struct tcp_msg *m, struct tcp_config *c, char *why, size_t len);
void tcp_sides_to_msg(struct tcp_msg *m, const struct tcp_worker *w, uint32_t n);
int tcp_sides_from_msg(const struct tcp_msg *m, struct tcp_side *s, uint32_t n, uint32_t slots, char *why, size_t len);

/* tcp_session.c: one test, either side. */
struct tcp_hook {
    /* Called once both sides are connected and before the start signal:
     * an MPI barrier for pairs, a sleep until --start-at for host lists. */
    int (*before_start)(void *arg, char *why, size_t len);
    void *arg;
};

/* Everything the client knows after one test. */
struct tcp_result {
    struct tcp_config cfg;
    uint32_t conns;
    struct tcp_side local[TCP_MAX_CONNS], remote[TCP_MAX_CONNS];
    struct cbk_histogram latency;       /* rr: all connections merged */
    double start_s;                     /* cbk_clock() at START */
    double start_realtime;              /* CLOCK_REALTIME at START */
    char server_host[TCP_HOST_LEN];     /* server's hostname */
    char peer[TCP_HOST_LEN];            /* address:port connected to */
    char ifname[64];                    /* client interface toward the server */
    double client_link_gbit, server_link_gbit; /* -1 unknown */
};

int tcp_client_session(const struct tcp_config *cfg, const char *host, int port, const char *bind,
                       const struct tcp_hook *hook, struct tcp_result *r, char *why, size_t len);
void tcp_result_free(struct tcp_result *r);

/* Serves one session (one client repetition). first_wait_s bounds the wait
 * for the client's control connection (<= 0: forever). On return *cfg holds
 * what the client asked (repetition, repetitions). */
int tcp_server_session(struct tcp_listener *l, double first_wait_s, double timeout_s,
                       const struct tcp_hook *hook, struct tcp_config *cfg, char *why, size_t len);

/* tcp_report.c */
/* Nominal speed of one pair's path: --link-speed when given, else the
 * slower of the two hosts' NICs from sysfs; -1 unknown. */
double tcp_pair_nominal_gbit(const struct tcp_result *r, double link_speed_arg);
/* Receiver-side totals of one direction (client_sends true: client->server). */
struct tcp_direction_total {
    uint64_t bytes, sender_bytes, calls, retransmits;
    double seconds;                    /* longest receiver time */
    double min_stream_gbit, max_stream_gbit;
    double rtt_us_mean;
    uint32_t streams;
    bool zerocopy_copied;
};
bool tcp_direction_total(const struct tcp_result *r, bool client_sends, struct tcp_direction_total *t);
/* counts per interval -> Gbit/s (or transactions/s) per interval; the
 * last interval, when shorter than half, is folded into the one before. */
void tcp_interval_rates(const uint64_t *counts, uint32_t n, double seconds, double interval_s, bool transactions,
                        double *out, uint32_t *out_n);
/* The measurement of one direction as seen by this pair. */
void tcp_stream_phase(struct cbk_phase *p, const struct tcp_result *r, bool client_sends,
                      const struct tcp_direction_total *t, const char *server, double nominal, double epoch_s);
void tcp_report_stream(struct cbk_ctx *c, const struct tcp_result *r, const char *server, double link_speed_arg);
void tcp_report_rr(struct cbk_ctx *c, const struct tcp_result *r, const char *server, double link_speed_arg);
/* rr: a warning (written into buf) when the client's time overran
 * --duration by more than a tenth, since a transaction in flight at the
 * deadline finishes; NULL when it did not. */
const char *tcp_rr_overrun(const struct tcp_config *c, double seconds, double longest_transaction_s, char *buf,
                           size_t len);

/* tcp_pairs.c (MPI builds): role=pairs. */
int tcp_pairs_setup(const struct cbk_args *a, struct cbk_ctx *c, void **state);
int tcp_pairs_run(const struct cbk_args *a, struct cbk_ctx *c, void *state);
void tcp_pairs_teardown(struct cbk_ctx *c, void *state);

/* tcp.c: the configuration from the parameters. */
void tcp_config_from_args(const struct cbk_args *a, struct tcp_config *cfg);
/* --bind, with "any" as "" (the wildcard / the kernel's choice). */
const char *tcp_bind_arg(const struct cbk_args *a);
double tcp_realtime(void);

#endif
