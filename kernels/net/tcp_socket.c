/* Sockets for the tcp kernel: every wait is bounded (poll, SO_SNDTIMEO,
 * SO_RCVTIMEO, TCP_USER_TIMEOUT), every error names the peer and the
 * system's reason, so a dead or missing peer is an error within the
 * timeout, never a hang. */
#include "tcp.h"

#include "../core/timer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int poll_ms(double seconds)
{
    if (seconds <= 0)
        return 0;
    double ms = seconds * 1000.0 + 0.5;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* poll() for one fd until `deadline` (cbk_clock() seconds; <= 0: forever),
 * restarting after signals. 1 ready, 0 timed out, -1 error (errno). */
static int wait_fd(int fd, short events, double deadline)
{
    for (;;) {
        struct pollfd p = { .fd = fd, .events = events };
        int ms = deadline <= 0 ? -1 : poll_ms(deadline - cbk_clock());
        int n = poll(&p, 1, ms);
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 ? -1 : n;
    }
}

static void set_timeouts(int fd, double timeout_s)
{
    struct timeval tv = { .tv_sec = (time_t)timeout_s,
                          .tv_usec = (suseconds_t)((timeout_s - (double)(time_t)timeout_s) * 1e6) };
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

static int set_buffers(int fd, uint64_t sndbuf, uint64_t rcvbuf, char *why, size_t len)
{
    int v;
    if (sndbuf) {
        v = sndbuf > INT_MAX ? INT_MAX : (int)sndbuf;
        if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v)) {
            snprintf(why, len, "setsockopt SO_SNDBUF %d: %s", v, strerror(errno));
            return -1;
        }
    }
    if (rcvbuf) {
        v = rcvbuf > INT_MAX ? INT_MAX : (int)rcvbuf;
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v)) {
            snprintf(why, len, "setsockopt SO_RCVBUF %d: %s", v, strerror(errno));
            return -1;
        }
    }
    return 0;
}

void tcp_buffer_sizes(int fd, uint64_t *sndbuf, uint64_t *rcvbuf)
{
    int v = 0;
    socklen_t n = sizeof v;
    *sndbuf = getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &n) ? 0 : (uint64_t)v;
    n = sizeof v;
    *rcvbuf = getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &n) ? 0 : (uint64_t)v;
}

static const char *host_or_any(const char *h) { return h && *h ? h : "any address"; }

static int open_listener(struct tcp_listener *l, char *why, size_t len)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *res = NULL;
    char port[16];
    snprintf(port, sizeof port, "%d", l->port);
    int rc = getaddrinfo(*l->bind ? l->bind : NULL, port, &hints, &res);
    if (rc) {
        snprintf(why, len, "cannot resolve --bind=%s: %s", l->bind, gai_strerror(rc));
        return -1;
    }
    /* Without --bind, prefer the IPv6 wildcard with IPV6_V6ONLY off: it
     * accepts IPv4 clients too. Fall back to IPv4 where IPv6 is off. */
    struct addrinfo *pick = res;
    for (struct addrinfo *ai = res; ai && !*l->bind; ai = ai->ai_next)
        if (ai->ai_family == AF_INET6)
            pick = ai;
    int fd = -1, err = 0;
    for (int attempt = 0; attempt < 2 && fd < 0; attempt++) {
        struct addrinfo *ai = attempt == 0 ? pick : res;
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1, zero = 0;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (ai->ai_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        if (set_buffers(fd, l->sndbuf_bytes, l->rcvbuf_bytes, why, len)) {
            close(fd);
            freeaddrinfo(res);
            return -1;
        }
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 2 * TCP_MAX_CONNS)) {
            err = errno;
            close(fd);
            fd = -1;
            if (err == EADDRINUSE || err == EACCES || err == EADDRNOTAVAIL)
                break;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        if (err == EADDRINUSE)
            snprintf(why, len, "port %d is in use on %s (another server is listening there; choose a free one with --port)",
                     l->port, host_or_any(l->bind));
        else if (err == EACCES)
            snprintf(why, len, "port %d on %s needs privileges: %s (choose a port above 1023)", l->port,
                     host_or_any(l->bind), strerror(err));
        else
            snprintf(why, len, "cannot listen on %s port %d: %s", host_or_any(l->bind), l->port, strerror(err));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        l->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
    l->fd = fd;
    return 0;
}

int tcp_listen(struct tcp_listener *l, const char *bind, int port, char *why, size_t len)
{
    memset(l, 0, sizeof *l);
    l->fd = -1;
    l->port = port;
    snprintf(l->bind, sizeof l->bind, "%s", bind ? bind : "");
    return open_listener(l, why, len);
}

int tcp_listener_buffers(struct tcp_listener *l, uint64_t sndbuf, uint64_t rcvbuf, char *why, size_t len)
{
    if (sndbuf == l->sndbuf_bytes && rcvbuf == l->rcvbuf_bytes)
        return 0;
    /* A size set on a socket stays locked (autotuning off); only a new
     * socket can go back to 0 = autotuning. */
    if ((l->sndbuf_bytes && !sndbuf) || (l->rcvbuf_bytes && !rcvbuf)) {
        close(l->fd);
        l->fd = -1;
        l->sndbuf_bytes = sndbuf;
        l->rcvbuf_bytes = rcvbuf;
        return open_listener(l, why, len);
    }
    l->sndbuf_bytes = sndbuf;
    l->rcvbuf_bytes = rcvbuf;
    return set_buffers(l->fd, sndbuf, rcvbuf, why, len);
}

void tcp_listener_close(struct tcp_listener *l)
{
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
}

int tcp_accept(struct tcp_listener *l, double wait_s, char *why, size_t len)
{
    double deadline = wait_s > 0 ? cbk_clock() + wait_s : 0;
    for (;;) {
        int n = wait_fd(l->fd, POLLIN, deadline);
        if (n < 0) {
            snprintf(why, len, "waiting for a connection on port %d: %s", l->port, strerror(errno));
            return -1;
        }
        if (n == 0) {
            snprintf(why, len, "no client connected to port %d within %g s", l->port, wait_s);
            return -1;
        }
        int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0)
            return fd;
        /* the peer may have given up between poll and accept */
        if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN || errno == EPROTO)
            continue;
        snprintf(why, len, "accept on port %d: %s", l->port, strerror(errno));
        return -1;
    }
}

static void describe_connect_error(int err, const char *host, int port, double timeout_s, char *why, size_t len)
{
    if (err == ETIMEDOUT)
        snprintf(why, len, "no answer from %s port %d within %g s (is the host up, and does a firewall let the port through?)",
                 host, port, timeout_s);
    else if (err == ECONNREFUSED)
        snprintf(why, len, "connection to %s port %d refused: no cbk tcp server listening there (start one with --role=server --port=%d)",
                 host, port, port);
    else
        snprintf(why, len, "cannot connect to %s port %d: %s", host, port, strerror(err));
}

int tcp_connect(const char *host, int port, const char *bind_addr, uint64_t sndbuf, uint64_t rcvbuf,
                double timeout_s, char *why, size_t len)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV },
                    *res = NULL;
    char ports[16];
    snprintf(ports, sizeof ports, "%d", port);
    int rc = getaddrinfo(host, ports, &hints, &res);
    if (rc) {
        snprintf(why, len, "cannot resolve server %s: %s", host, gai_strerror(rc));
        return -1;
    }
    double deadline = cbk_clock() + timeout_s;
    int err = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (set_buffers(fd, sndbuf, rcvbuf, why, len)) {
            close(fd);
            freeaddrinfo(res);
            return -1;
        }
        if (bind_addr && *bind_addr) {
            struct addrinfo bh = { .ai_family = ai->ai_family, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE },
                            *br = NULL;
            int brc = getaddrinfo(bind_addr, NULL, &bh, &br);
            if (brc || bind(fd, br->ai_addr, br->ai_addrlen)) {
                snprintf(why, len, "cannot bind the client to --bind=%s: %s", bind_addr,
                         brc ? gai_strerror(brc) : strerror(errno));
                if (br)
                    freeaddrinfo(br);
                close(fd);
                freeaddrinfo(res);
                return -1;
            }
            freeaddrinfo(br);
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
            err = errno;
            close(fd);
            continue;
        }
        int n = wait_fd(fd, POLLOUT, deadline);
        socklen_t el = sizeof err;
        if (n == 0)
            err = ETIMEDOUT;
        else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el))
            err = errno;
        if (err) {
            close(fd);
            continue;
        }
        int flags = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
        freeaddrinfo(res);
        return fd;
    }
    freeaddrinfo(res);
    describe_connect_error(err, host, port, timeout_s, why, len);
    return -1;
}

void tcp_control_options(int fd)
{
    /* control messages are small and answered: never hold one back */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int tcp_data_options(int fd, const struct tcp_config *c, bool sends, char *why, size_t len)
{
    int one = 1;
    if (c->nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one)) {
        snprintf(why, len, "setsockopt TCP_NODELAY: %s", strerror(errno));
        return -1;
    }
    /* A blocked send()/recv() returns EAGAIN after the timeout, and
     * unacknowledged data aborts the connection after it: a peer that
     * vanished without a reset cannot stall a thread for longer. */
    set_timeouts(fd, c->timeout_s);
    unsigned int user_ms = (unsigned int)(c->timeout_s * 1000.0);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof user_ms);
    /* The receiver sleeps until a batch waits, not until each segment
     * arrives: every wake-up of a sleeping thread costs the CPU that
     * delivers the data (on loopback, the sender's) an inter-processor
     * interrupt. The kernel caps the value at half the receive buffer and
     * still wakes at once at end of stream or when the window fills. */
    int batch = (int)c->receive_batch_bytes;
    if (!sends && c->test == TCP_TEST_STREAM && batch > 0 &&
        setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &batch, sizeof batch)) {
        snprintf(why, len, "setsockopt SO_RCVLOWAT %d: %s (--receive-batch=0 does without it)", batch, strerror(errno));
        return -1;
    }
    if (sends && c->zerocopy) {
#ifdef SO_ZEROCOPY
        if (setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one)) {
            snprintf(why, len, "MSG_ZEROCOPY is not available here (setsockopt SO_ZEROCOPY: %s; Linux >= 4.14 needed)",
                     strerror(errno));
            return -1;
        }
#else
        snprintf(why, len, "MSG_ZEROCOPY is not available: cbk was built with C headers that lack SO_ZEROCOPY");
        return -1;
#endif
    }
    return 0;
}

int tcp_read_full(int fd, void *buf, size_t n, double timeout_s, const char *what, char *why, size_t len)
{
    double deadline = cbk_clock() + timeout_s;
    size_t got = 0;
    while (got < n) {
        int w = wait_fd(fd, POLLIN, deadline);
        if (w == 0) {
            snprintf(why, len, "%s: nothing received within %g s", what, timeout_s);
            return -1;
        }
        if (w < 0) {
            snprintf(why, len, "%s: %s", what, strerror(errno));
            return -1;
        }
        ssize_t r = recv(fd, (char *)buf + got, n - got, MSG_DONTWAIT);
        if (r == 0) {
            snprintf(why, len, "%s: the peer closed the connection", what);
            return -1;
        }
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            snprintf(why, len, "%s: %s", what, strerror(errno));
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

int tcp_write_full(int fd, const void *buf, size_t n, double timeout_s, const char *what, char *why, size_t len)
{
    double deadline = cbk_clock() + timeout_s;
    size_t put = 0;
    while (put < n) {
        int w = wait_fd(fd, POLLOUT, deadline);
        if (w == 0) {
            snprintf(why, len, "%s: the peer accepted nothing within %g s", what, timeout_s);
            return -1;
        }
        if (w < 0) {
            snprintf(why, len, "%s: %s", what, strerror(errno));
            return -1;
        }
        ssize_t r = send(fd, (const char *)buf + put, n - put, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            snprintf(why, len, "%s: %s", what, strerror(errno));
            return -1;
        }
        put += (size_t)r;
    }
    return 0;
}

void tcp_info_counts(int fd, uint64_t *retransmits, uint64_t *rtt_us)
{
    struct tcp_info ti;
    socklen_t n = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &n) == 0) {
        *retransmits = ti.tcpi_total_retrans;
        *rtt_us = ti.tcpi_rtt;
    }
}

/* Interface that holds `addr` (compared as raw address bytes). */
static int interface_of(const struct sockaddr *addr, char *ifname, size_t len)
{
    struct ifaddrs *ifs = NULL, *found = NULL;
    if (getifaddrs(&ifs))
        return -1;
    for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != addr->sa_family)
            continue;
        if (addr->sa_family == AF_INET &&
            ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == ((const struct sockaddr_in *)addr)->sin_addr.s_addr)
            found = i;
        if (addr->sa_family == AF_INET6 &&
            !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, &((const struct sockaddr_in6 *)addr)->sin6_addr,
                    sizeof(struct in6_addr)))
            found = i;
    }
    if (found)
        snprintf(ifname, len, "%s", found->ifa_name);
    freeifaddrs(ifs);
    return found ? 0 : -1;
}

/* An IPv4 client of a dual-stack listener appears as ::ffff:a.b.c.d. */
static void unmap_v4(struct sockaddr_storage *ss)
{
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
        return;
    struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = s6->sin6_port };
    memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
    memset(ss, 0, sizeof *ss);
    memcpy(ss, &s4, sizeof s4);
}

double tcp_link_speed_gbit(int fd, char *ifname, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char name[IF_NAMESIZE + 1] = "";
    if (ifname && len)
        ifname[0] = '\0';
    if (getsockname(fd, (struct sockaddr *)&ss, &sl))
        return -1;
    unmap_v4(&ss);
    if (interface_of((struct sockaddr *)&ss, name, sizeof name))
        return -1;
    if (ifname)
        snprintf(ifname, len, "%s", name);
    char path[128];
    snprintf(path, sizeof path, "/sys/class/net/%s/speed", name);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long mbit = -1;
    /* unknown speeds read as -1 or fail with EINVAL (loopback, some virtual NICs) */
    if (fscanf(f, "%ld", &mbit) != 1)
        mbit = -1;
    fclose(f);
    return mbit > 0 ? (double)mbit / 1000.0 : -1;
}

void tcp_peer_name(int fd, char *out, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
        unmap_v4(&ss);
        if (ss.ss_family == AF_INET) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof host);
            port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof host);
            port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        }
    }
    snprintf(out, len, "%s:%d", host, port);
}

static bool usable(const struct ifaddrs *i)
{
    if (!i->ifa_addr || !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
        return false;
    if (i->ifa_addr->sa_family == AF_INET)
        return true;
    if (i->ifa_addr->sa_family == AF_INET6)
        return !IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr);
    return false;
}

void tcp_local_addresses(char *out, size_t len)
{
    struct ifaddrs *ifs = NULL;
    size_t used = 0;
    out[0] = '\0';
    if (getifaddrs(&ifs))
        return;
    /* IPv4 first: the usual data networks of a cluster */
    for (int pass = 0; pass < 2; pass++)
        for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
            if (!usable(i) || (pass == 0) != (i->ifa_addr->sa_family == AF_INET))
                continue;
            char host[INET6_ADDRSTRLEN];
            const void *a = i->ifa_addr->sa_family == AF_INET ? (const void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr
                                                              : (const void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
            inet_ntop(i->ifa_addr->sa_family, a, host, sizeof host);
            size_t need = strlen(host) + (used ? 1 : 0);
            if (used + need + 1 > len)
                continue;
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? "," : "", host);
        }
    freeifaddrs(ifs);
}

static bool same_subnet(const struct ifaddrs *i, const char *addr)
{
    if (!usable(i) || !i->ifa_netmask)
        return false;
    unsigned char a[16], mine[16], mask[16];
    size_t n;
    if (i->ifa_addr->sa_family == AF_INET) {
        if (inet_pton(AF_INET, addr, a) != 1)
            return false;
        memcpy(mine, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
        memcpy(mask, &((struct sockaddr_in *)i->ifa_netmask)->sin_addr, 4);
        n = 4;
    } else {
        if (inet_pton(AF_INET6, addr, a) != 1)
            return false;
        memcpy(mine, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
        memcpy(mask, &((struct sockaddr_in6 *)i->ifa_netmask)->sin6_addr, 16);
        n = 16;
    }
    for (size_t k = 0; k < n; k++)
        if ((a[k] & mask[k]) != (mine[k] & mask[k]))
            return false;
    return true;
}

void tcp_pick_address(const char *list, char *out, size_t len)
{
    struct ifaddrs *ifs = NULL;
    char first[TCP_HOST_LEN] = "";
    out[0] = '\0';
    if (getifaddrs(&ifs))
        ifs = NULL;
    for (const char *p = list; p && *p && !*out;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char addr[TCP_HOST_LEN];
        snprintf(addr, sizeof addr, "%.*s", (int)(n < sizeof addr ? n : sizeof addr - 1), p);
        if (!*first)
            snprintf(first, sizeof first, "%s", addr);
        for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
            if (same_subnet(i, addr)) {
                snprintf(out, len, "%s", addr);
                break;
            }
        p = comma ? comma + 1 : NULL;
    }
    if (!*out)
        snprintf(out, len, "%s", first);
    if (ifs)
        freeifaddrs(ifs);
}
