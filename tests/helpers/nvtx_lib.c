/*
 * A shared object with its own NVTX (no hostrange.h), built twice for the
 * NVTX tool's tests: nvtx_lib_work() runs the range NVTX_LIB_RANGE around
 * the range "lib.inner".
 */
#include <nvToolsExt.h>

void nvtx_lib_work(void) __attribute__((visibility("default")));

void nvtx_lib_work(void)
{
    nvtxRangePushA(NVTX_LIB_RANGE);
    nvtxRangePushA("lib.inner");
    nvtxRangePop();
    nvtxRangePop();
}
