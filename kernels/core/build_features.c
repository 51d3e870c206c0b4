#include "build_features.h"

#include <stdbool.h>

void cbk_json_build_features(struct cbk_json *j)
{
    cbk_json_object(j, "features");
#ifdef CBK_HAVE_OPENMP
    cbk_json_bool(j, "openmp", true);
#else
    cbk_json_bool(j, "openmp", false);
#endif
#ifdef CBK_HAVE_LIBURING
    cbk_json_bool(j, "liburing", true);
#else
    cbk_json_bool(j, "liburing", false);
#endif
#ifdef CBK_HAVE_LIBAIO
    cbk_json_bool(j, "libaio", true);
#else
    cbk_json_bool(j, "libaio", false);
#endif
#ifdef CBK_HAVE_CUDA
    cbk_json_bool(j, "cuda", true);
#else
    cbk_json_bool(j, "cuda", false);
#endif
#ifdef CBK_GPU_TEST_RUNTIME
    /* only in a test build: the GPU kernels on host memory (docs/gpu.md) */
    cbk_json_bool(j, "gpu_test_runtime", true);
#endif
    cbk_json_close(j);
}
