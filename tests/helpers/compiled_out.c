/*
 * A program using every call of hostrange.h, built twice by `make check`:
 * as is, and with HOSTRANGE_DISABLE defined. test_compiled_out.sh checks
 * with nm that the second references no hr_ symbol (and links without the
 * library at all). Call sites carry no #if.
 */
#include <stdio.h>

#include "hostrange.h"

static hr_site s_outer = HR_SITE_INIT("demo.outer");
static hr_site s_inner = HR_SITE_INIT("demo.inner");
static hr_site s_e2e = HR_SITE_INIT("end_to_end");

static int work(int n)
{
    HR_SCOPE(sc, &s_outer);
    int sum = 0;

    for (int i = 0; i < n; i++) {
        hr_scope in = hr_begin(&s_inner);
        sum += i;
        hr_end(in);
    }
    return sum;
}

int main(void)
{
    hr_counters c;
    uint64_t t0 = hr_now_ns();
    int sum;

    hr_labels_set("compiled_out", "demo", "cpu", HR_PHASE_WARM);
    hr_window_begin();
    sum = work(10);
    hr_window_end();
    hr_record(&s_e2e, hr_now_ns() - t0);
    hr_flush(0);
    hr_counters_get(&c);
    printf("compiled=%d enabled=%d clock=%s sum=%d\n", hr_compiled(),
           hr_enabled(), hr_clock_name(), sum);
    return 0;
}
