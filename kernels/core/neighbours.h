/* Another cbk at work beside this one: a private directory of another,
 * live cbk run in the parent of one of this run's. Its I/O shares the
 * device with this run's, so a figure measured meanwhile is not the
 * device's alone. Two `clusterbench run seqio --dir=D` at once stored both
 * runs ok, each at part of the device's rate, and said nothing. */
#ifndef CBK_NEIGHBOURS_H
#define CBK_NEIGHBOURS_H

#include <stddef.h>

/* 1 and a warning in `what` when such a directory exists now, else 0.
 * Seen from this host: a stamp of another host (a shared file system) is
 * not judged, nor a directory of this run's own ranks (one cbk run id). */
int cbk_neighbour_seen(char *what, size_t len);

#endif
