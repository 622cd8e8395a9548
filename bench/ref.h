/*
 * ref.h: arrays on any device with a host copy, and the double-precision
 * reference results the benchmark and the tests check the operators
 * against.
 *
 * A struct ref_array owns host storage, and device storage of the same
 * layout when its device is not the CPU (for the CPU the two are one). Its
 * descriptor `d` points at the device copy, with the array's own shape and
 * strides (any sign); `origin` is the offset, in elements, of element
 * (0, ..., 0) in the storage. The host copy is the one read and written by
 * ref_fill, ref_get and the references; ref_upload and ref_download copy it
 * to and from the device.
 */
#ifndef HROPS_REF_H
#define HROPS_REF_H

#include <stddef.h>
#include <stdint.h>

#include "ops/hrops.h"

struct ref_array {
    hrops_array d;
    int64_t shape[HROPS_MAX_RANK];
    int64_t strides[HROPS_MAX_RANK];
    int64_t numel;
    int64_t origin;
    size_t bytes;
    char *host;                 /* the storage on the host */
    char *dev;                  /* the storage on the device */
    char device[24];
};

/*
 * Makes an array of dtype with `ndim` dimensions of `shape` and `strides`
 * (NULL: contiguous) on `device`. Returns 0 or a negative errno; a failed
 * array needs no ref_array_fini.
 */
int ref_array_init(struct ref_array *x, int dtype, int ndim,
                   const int64_t *shape, const int64_t *strides,
                   const char *device);
void ref_array_fini(struct ref_array *x);

/* Fills the host copy with pseudo-random values in [-1, 1] (from `seed`),
 * rounded to the dtype; every storage element is written. */
void ref_fill(struct ref_array *x, uint32_t seed);

int ref_upload(struct ref_array *x);
int ref_download(struct ref_array *x);

/* The host value of the element at linear (row-major) index i. */
double ref_get(const struct ref_array *x, int64_t i);

/* The value v rounded to dtype, and read back as a double. */
double ref_round(int dtype, double v);

/*
 * The references: ref[i] for each element i (row-major) of out, or of c,
 * computed in double from the host copies, and bound[i], the sum of the
 * magnitudes of the terms summed into it, the scale of its rounding error.
 * They return 0, or -EINVAL when the shapes do not fit.
 */
int ref_add(const struct ref_array *a, const struct ref_array *b,
            const struct ref_array *out, double *ref, double *bound);
int ref_gemm(const struct ref_array *a, const struct ref_array *b,
             const struct ref_array *c, double alpha, double beta, int flags,
             double *ref, double *bound);

/* The relative tolerance for results of dtype. */
double ref_tolerance(int dtype);

/*
 * The largest scaled error of out's host copy against ref: the maximum over
 * the elements of |got - ref| / (tol * (bound + 1e-3)); above 1 is a wrong
 * result. *worst gets the index of that element when worst is not NULL.
 */
double ref_check(const struct ref_array *out, const double *ref,
                 const double *bound, double tol, int64_t *worst);

#endif /* HROPS_REF_H */
