/*
 * half.h: the 16-bit floating-point types held as their bits (uint16_t),
 * and their conversions to and from float, rounding to nearest with ties to
 * even as the CUDA intrinsics do. float16 is IEEE 754 binary16 (1 sign bit,
 * 5 exponent bits, 10 fraction bits); bfloat16 is the upper half of a
 * float32 (8 exponent bits, 7 fraction bits). A NaN stays a NaN (quiet).
 */
#ifndef HROPS_HALF_H
#define HROPS_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t hrops__f32_bits(float f)
{
    uint32_t x;

    memcpy(&x, &f, sizeof x);
    return x;
}

static inline float hrops__f32_from_bits(uint32_t x)
{
    float f;

    memcpy(&f, &x, sizeof f);
    return f;
}

static inline float hrops__f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t frac = h & 0x3ffu;

    if (exp == 0x1f)            /* infinity or NaN */
        return hrops__f32_from_bits(sign | 0x7f800000u | (frac << 13));
    if (exp == 0) {             /* zero or subnormal: frac * 2^-24 */
        float v = (float)frac * 0x1p-24f;
        return sign ? -v : v;
    }
    return hrops__f32_from_bits(sign | ((exp + 112) << 23) | (frac << 13));
}

static inline uint16_t hrops__f32_to_f16(float f)
{
    uint32_t x = hrops__f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t mag = x & 0x7fffffffu;

    if (mag > 0x7f800000u)      /* NaN */
        return sign | 0x7e00u;
    if (mag >= 0x47800000u)     /* 2^16 or more, or infinity */
        return sign | 0x7c00u;
    if (mag >= 0x38800000u) {   /* a normal binary16: 2^-14 or more */
        /* Rebias the exponent (127 to 15), then round off 13 bits; a carry
         * into the exponent is the right result, up to infinity. */
        uint32_t r = mag - 0x38000000u;

        r += 0x0fffu + ((r >> 13) & 1u);
        return sign | (uint16_t)(r >> 13);
    }
    if (mag < 0x33000000u)      /* below 2^-25: rounds to zero */
        return sign;
    {
        /* A subnormal binary16: the value in units of 2^-24 is
         * (frac | 2^23) >> (126 - exp), rounded to nearest even. */
        uint32_t exp = mag >> 23;
        uint32_t m = (mag & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - exp;
        uint32_t q = m >> shift;
        uint32_t rest = m & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);

        if (rest > half || (rest == half && (q & 1u)))
            q++;
        return sign | (uint16_t)q;
    }
}

static inline float hrops__bf16_to_f32(uint16_t h)
{
    return hrops__f32_from_bits((uint32_t)h << 16);
}

static inline uint16_t hrops__f32_to_bf16(float f)
{
    uint32_t x = hrops__f32_bits(f);

    if ((x & 0x7fffffffu) > 0x7f800000u)    /* NaN */
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

#endif /* HROPS_HALF_H */
