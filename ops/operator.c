/*
 * The operator layer: operator.call around the prepared-operator cache
 * (cache.key, cache.lookup, and cache.construct on a miss), then
 * operator.invoke, which binds the call's data to the plan, around
 * backend.submit.
 */
#include "config.h"

#include "hostrange.h"
#include "ops/ops.h"
#include "ops/slow.h"

static hr_site s_call = HR_SITE_INIT("operator.call");
static hr_site s_key = HR_SITE_INIT("cache.key");
static hr_site s_lookup = HR_SITE_INIT("cache.lookup");
static hr_site s_construct = HR_SITE_INIT("cache.construct");
static hr_site s_invoke = HR_SITE_INIT("operator.invoke");
static hr_site s_submit = HR_SITE_INIT("backend.submit");

/* Finds or makes impl's plan for the call, then runs it. Returns 0 or the
 * negative errno of the construction, the cache or the backend. */
int hrops__operator_call(const struct hrops__impl *impl,
                         const struct hrops__call *c)
{
    HR_SCOPE(call, &s_call);
    uint64_t key[HROPS__KEY_MAX_WORDS], hash;
    union hrops__args args;
    void *plan;
    size_t n;
    int rc;

    {
        HR_SCOPE(k, &s_key);
        n = hrops__key_build(impl, c, key);
        hash = hrops__key_hash(key, n);
    }
    {
        HR_SCOPE(l, &s_lookup);
        plan = hrops__cache_lookup(key, n, hash);
    }
    if (plan == NULL) {
        HR_SCOPE(m, &s_construct);
        rc = impl->construct(c, &plan);
        if (rc != 0)
            return rc;
        rc = hrops__cache_insert(key, n, hash, impl, plan);
        if (rc != 0) {
            impl->destroy(plan);
            return rc;
        }
    }
    {
        HR_SCOPE(inv, &s_invoke);
        rc = impl->bind(plan, c, &args);
        if (rc == 0) {
            HR_SCOPE(sub, &s_submit);
            uint64_t t0 = hrops__slow_begin(HROPS__SLOW_SUBMIT);

            rc = impl->submit(plan, &args);
            hrops__slow_end(HROPS__SLOW_SUBMIT, t0);
        }
    }
    return rc;
}
