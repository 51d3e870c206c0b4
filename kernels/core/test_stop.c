/* The test hook CBK_TEST_STOP_AT: see test_stop.h. */
#include "test_stop.h"

#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void cbk_test_stop_at(int rank, const char *point)
{
    static bool stopped;   /* once: "barrier" is the first patient barrier */
    const char *at = getenv("CBK_TEST_STOP_AT");
    char *end = NULL;
    if (stopped || !at || !*at || strtol(at, &end, 10) != rank || *end != ':' || strcmp(end + 1, point))
        return;
    stopped = true;
    raise(SIGSTOP);
}
