/* See tcp_retransmits.h. */
#include "tcp_retransmits.h"

#include <dirent.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/tcp.h>   /* tcpi_bytes_sent, tcpi_bytes_retrans, tcpi_dsack_dups (Linux 4.19), which glibc's lacks */

#define ADDRESS_BYTES 16
#define MAX_ADDRESSES 8   /* distinct local addresses of one rank's sockets */

struct endpoint {
    unsigned char address[ADDRESS_BYTES];   /* IPv4 as IPv4-mapped IPv6 */
    uint16_t port;
};

struct tcp_socket {
    struct endpoint local, peer;
    struct cbk_tcp_counts counts;
    bool duplicates_known;   /* the kernel's TCP_INFO reaches tcpi_dsack_dups */
};

struct cbk_tcp_sockets {
    struct tcp_socket *socket;
    size_t count, capacity;
};

static bool endpoint_of(const struct sockaddr_storage *a, struct endpoint *e)
{
    memset(e, 0, sizeof *e);
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const void *)a;
        e->address[10] = e->address[11] = 0xff;
        memcpy(e->address + 12, &v4->sin_addr, 4);
        e->port = ntohs(v4->sin_port);
        return true;
    }
    if (a->ss_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const void *)a;
        memcpy(e->address, &v6->sin6_addr, ADDRESS_BYTES);
        e->port = ntohs(v6->sin6_port);
        return true;
    }
    return false;
}

static bool read_socket(int fd, struct tcp_socket *out)
{
    struct stat st;
    int type = 0, protocol = 0;
    socklen_t len = sizeof type;
    if (fstat(fd, &st) || !S_ISSOCK(st.st_mode) || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) ||
        type != SOCK_STREAM)
        return false;
    len = sizeof protocol;
    if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) || protocol != IPPROTO_TCP)
        return false;
    struct sockaddr_storage local, peer;
    socklen_t local_len = sizeof local, peer_len = sizeof peer;
    if (getsockname(fd, (struct sockaddr *)&local, &local_len) || getpeername(fd, (struct sockaddr *)&peer, &peer_len) ||
        !endpoint_of(&local, &out->local) || !endpoint_of(&peer, &out->peer))
        return false;
    struct tcp_info info;
    memset(&info, 0, sizeof info);
    len = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) ||
        len < offsetof(struct tcp_info, tcpi_bytes_retrans) + sizeof info.tcpi_bytes_retrans)
        return false;   /* a kernel older than 4.19 has no byte counts */
    out->counts.bytes_sent = info.tcpi_bytes_sent;
    out->counts.bytes_retransmitted = info.tcpi_bytes_retrans;
    out->counts.segments_sent = info.tcpi_data_segs_out;
    out->duplicates_known = len >= offsetof(struct tcp_info, tcpi_dsack_dups) + sizeof info.tcpi_dsack_dups;
    out->counts.segments_duplicated = out->duplicates_known ? info.tcpi_dsack_dups : 0;
    return true;
}

struct cbk_tcp_sockets *cbk_tcp_census(void)
{
    DIR *dir = opendir("/proc/self/fd");
    struct cbk_tcp_sockets *s = calloc(1, sizeof *s);
    if (!dir || !s) {
        if (dir)
            closedir(dir);
        free(s);
        return NULL;
    }
    struct dirent *e;
    while ((e = readdir(dir))) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        struct tcp_socket one;
        if (*end || end == e->d_name || fd == dirfd(dir) || !read_socket((int)fd, &one))
            continue;
        if (s->count == s->capacity) {
            size_t capacity = s->capacity ? 2 * s->capacity : 64;
            struct tcp_socket *grown = realloc(s->socket, capacity * sizeof *grown);
            if (!grown)
                break;   /* the sockets counted so far */
            s->socket = grown;
            s->capacity = capacity;
        }
        s->socket[s->count++] = one;
    }
    closedir(dir);
    return s;
}

void cbk_tcp_census_free(struct cbk_tcp_sockets *s)
{
    if (s)
        free(s->socket);
    free(s);
}

/* 127.0.0.0/8 or ::1: every node has them, so they name no rank (a launcher's local connection) */
static bool loopback(const unsigned char *a)
{
    static const unsigned char v4_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    static const unsigned char v6_loopback[ADDRESS_BYTES] = { [15] = 1 };
    return (!memcmp(a, v4_prefix, 12) && a[12] == 127) || !memcmp(a, v6_loopback, ADDRESS_BYTES);
}

static bool same(const struct endpoint *a, const struct endpoint *b)
{
    return a->port == b->port && !memcmp(a->address, b->address, ADDRESS_BYTES);
}

static const struct tcp_socket *find(const struct cbk_tcp_sockets *s, const struct tcp_socket *like)
{
    for (size_t i = 0; s && i < s->count; i++)
        if (same(&s->socket[i].local, &like->local) && same(&s->socket[i].peer, &like->peer))
            return &s->socket[i];
    return NULL;
}

/* now - then, field by field; the counters are the kernel's 32-bit ones for segments, so a
 * difference is taken in their width (a connection sending 2^32 segments wraps) */
static void add_difference(struct cbk_tcp_counts *sum, const struct cbk_tcp_counts *now,
                           const struct cbk_tcp_counts *then)
{
    static const struct cbk_tcp_counts zero;
    if (!then)
        then = &zero;
    sum->bytes_sent += now->bytes_sent - then->bytes_sent;
    sum->bytes_retransmitted += now->bytes_retransmitted - then->bytes_retransmitted;
    sum->segments_sent += (uint32_t)(now->segments_sent - then->segments_sent);
    sum->segments_duplicated += (uint32_t)(now->segments_duplicated - then->segments_duplicated);
}

bool cbk_tcp_retransmits_by_rank(MPI_Comm comm, const struct cbk_tcp_sockets *before,
                                 const struct cbk_tcp_sockets *after, struct cbk_tcp_counts *to,
                                 bool *duplicates_known)
{
    int size, rank;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    memset(to, 0, (size_t)size * sizeof *to);
    int known = 1;
    /* this rank's distinct local addresses, so a socket's peer address names a rank */
    unsigned char mine[MAX_ADDRESSES][ADDRESS_BYTES];
    memset(mine, 0, sizeof mine);
    int kept = 0;
    for (size_t i = 0; after && i < after->count; i++) {
        const unsigned char *a = after->socket[i].local.address;
        bool seen = loopback(a);
        for (int k = 0; k < kept && !seen; k++)
            seen = !memcmp(mine[k], a, ADDRESS_BYTES);
        if (!seen && kept < MAX_ADDRESSES)
            memcpy(mine[kept++], a, ADDRESS_BYTES);
    }
    unsigned char (*all)[MAX_ADDRESSES][ADDRESS_BYTES] = malloc((size_t)size * sizeof *all);
    int ok = all != NULL, shared = 0, reached = 0, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        free(all);
        return false;
    }
    MPI_Allgather(mine, MAX_ADDRESSES * ADDRESS_BYTES, MPI_UNSIGNED_CHAR, all, MAX_ADDRESSES * ADDRESS_BYTES,
                  MPI_UNSIGNED_CHAR, comm);
    static const unsigned char unset[ADDRESS_BYTES];
    for (size_t i = 0; after && i < after->count; i++) {
        const struct tcp_socket *now = &after->socket[i], *then = find(before, now);
        int owner = -1;
        for (int r = 0; !loopback(now->peer.address) && r < size; r++)
            for (int k = 0; k < MAX_ADDRESSES; k++)
                if (r != rank && memcmp(all[r][k], unset, ADDRESS_BYTES) &&
                    !memcmp(all[r][k], now->peer.address, ADDRESS_BYTES)) {
                    shared |= owner >= 0 && owner != r;
                    owner = r;
                }
        if (owner < 0)
            continue;   /* the launcher's, a file system's: not a link of this communicator */
        reached = 1;
        known &= now->duplicates_known;
        add_difference(&to[owner], &now->counts, then ? &then->counts : NULL);
    }
    free(all);
    /* unknown on one rank: unknown on all (a missing count is not a zero) */
    int flags[3] = { reached, shared, !known }, any[3];
    MPI_Allreduce(flags, any, 3, MPI_INT, MPI_MAX, comm);
    *duplicates_known = !any[2];
    return any[0] && !any[1];
}
