/* The optional parts compiled into this cbk (OpenMP threads, randio's
 * io_uring and libaio engines, the CUDA kernels), so --describe and every
 * run record say which build measured: a cbk built without OpenMP runs
 * Himeno and stream on one thread, one without liburing has no io_uring. */
#ifndef CBK_BUILD_FEATURES_H
#define CBK_BUILD_FEATURES_H

#include "json.h"

/* "features": {"openmp": bool, "liburing": bool, "libaio": bool, "cuda": bool} */
void cbk_json_build_features(struct cbk_json *j);

#endif
