/* What TCP retransmitted on this process's connections to each rank of a
 * communicator: packet loss on a link, which bandwidth and latency figures
 * can hide. On a microsecond round trip TCP recovers a lost segment within
 * the window, so a link dropping 2 % of its packets still carries its full
 * rate (the best of a few repetitions), and an 8-byte exchange that waits
 * out a retransmission timer is one of a hundred (the median): what does
 * show is the bytes sent twice.
 *
 * A link that duplicates packets (a switch or port sending a frame twice)
 * slows nothing and resends nothing: the receiver takes the second copy,
 * drops it and tells the sender with a D-SACK (RFC 2883), which the
 * sender's TCP_INFO counts (tcpi_dsack_dups, Linux 4.19 with the byte
 * counts). Against the data segments it sent, that is the share of its
 * segments the network delivered twice (a spurious retransmission, one
 * sent again that had arrived, is D-SACKed too).
 *
 * Read from the sockets the MPI library opened in this process (TCP_INFO
 * of each connected TCP socket found under /proc/self/fd), so only where
 * the library moves the link's bytes over TCP (MPICH's and Open MPI's TCP
 * transports, libfabric's tcp and sockets providers); over InfiniBand or
 * shared memory there is no socket and nothing is reported. A socket is
 * put to the rank whose node has its peer's address (each rank's local
 * addresses are gathered), so with more than one rank at an address the
 * count is not a link's and is not reported. */
#ifndef CBK_TCP_RETRANSMITS_H
#define CBK_TCP_RETRANSMITS_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

struct cbk_tcp_sockets;   /* a census of this process's TCP sockets: opaque */

/* This process's connected TCP sockets and their counters now; NULL when
 * they cannot be listed (no /proc, out of memory). */
struct cbk_tcp_sockets *cbk_tcp_census(void);
void cbk_tcp_census_free(struct cbk_tcp_sockets *s);

/* What TCP did on the sockets from this process to one rank: uint64_t
 * fields only, so an array of them travels as CBK_TCP_COUNTS_U64 each. */
struct cbk_tcp_counts {
    uint64_t bytes_sent, bytes_retransmitted;
    uint64_t segments_sent;         /* data segments (tcpi_data_segs_out) */
    uint64_t segments_duplicated;   /* D-SACKs received: segments the peer got twice */
};
#define CBK_TCP_COUNTS_U64 (sizeof(struct cbk_tcp_counts) / sizeof(uint64_t))

/* Collective over comm. Counts between two censuses, per destination rank:
 * to[j] for j < size, this rank the source (a socket absent from `before`
 * counts from zero: MPI connects lazily). Returns true on every rank when
 * the counts are links' (some socket reached another rank, and no two ranks
 * share an address). *duplicates_known: every rank's kernel reports D-SACKs
 * (TCP_INFO long enough for tcpi_dsack_dups); when false the segment counts
 * are zero. */
bool cbk_tcp_retransmits_by_rank(MPI_Comm comm, const struct cbk_tcp_sockets *before,
                                 const struct cbk_tcp_sockets *after, struct cbk_tcp_counts *to,
                                 bool *duplicates_known);

#endif
