/* CRC-32C (see crc32c.h): slicing by eight, or SSE 4.2 where the CPU has
 * it. */
#include "config.h"

#include "lib/run/crc32c.h"

#include <endian.h>
#include <string.h>

static uint32_t table[8][256];
static int table_ready;

static void table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1u)));
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++) {
        for (int t = 1; t < 8; t++)
            table[t][i] = (table[t - 1][i] >> 8) ^
                          table[0][table[t - 1][i] & 0xff];
    }
    table_ready = 1;
}

/* Slicing by eight: eight table look-ups per eight bytes. */
static uint32_t crc_sw(uint32_t crc, const uint8_t *p, size_t n)
{
    if (!table_ready)
        table_init();
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w = le64toh(w) ^ crc;
        crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^
              table[5][(w >> 16) & 0xff] ^ table[4][(w >> 24) & 0xff] ^
              table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
              table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n-- > 0)
        crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
    return crc;
}

/*
 * Combining CRCs: the operator that appends `len` zero bytes to a CRC
 * register, as four byte-wise tables (GF(2) matrices squared up from the
 * one-bit operator, after Mark Adler's crc32c.c). Three streams of LONG
 * (or SHORT) bytes are computed side by side, then the first two are
 * shifted over the ones after them and combined.
 */
#define LONG 8192u
#define SHORT 256u

static uint32_t zeros_long[4][256], zeros_short[4][256];

static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
    uint32_t sum = 0;

    for (; vec != 0; vec >>= 1, mat++) {
        if (vec & 1)
            sum ^= *mat;
    }
    return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *mat)
{
    for (int n = 0; n < 32; n++)
        square[n] = gf2_times(mat, mat[n]);
}

/* The operator for len zero bytes (len a power of two). */
static void zeros_op(uint32_t *even, size_t len)
{
    uint32_t odd[32], row = 1;

    odd[0] = 0x82f63b78u; /* one zero bit */
    for (int n = 1; n < 32; n++, row <<= 1)
        odd[n] = row;
    gf2_square(even, odd); /* two bits */
    gf2_square(odd, even); /* four bits */
    for (;;) {
        gf2_square(even, odd); /* one byte, then four, ... */
        len >>= 1;
        if (len == 0)
            return;
        gf2_square(odd, even);
        len >>= 1;
        if (len == 0)
            break;
    }
    memcpy(even, odd, sizeof odd);
}

static void zeros_table(uint32_t zeros[4][256], size_t len)
{
    uint32_t op[32];

    zeros_op(op, len);
    for (uint32_t n = 0; n < 256; n++) {
        for (int b = 0; b < 4; b++)
            zeros[b][n] = gf2_times(op, n << (8 * b));
    }
}

static uint32_t shift(uint32_t zeros[4][256], uint32_t crc)
{
    return zeros[0][crc & 0xff] ^ zeros[1][(crc >> 8) & 0xff] ^
           zeros[2][(crc >> 16) & 0xff] ^ zeros[3][crc >> 24];
}

#if defined(__x86_64__)
#include <nmmintrin.h>

/* The SSE 4.2 instruction, on three streams at once while the data lasts
 * (the instruction's latency is three times its throughput). */
__attribute__((target("sse4.2"))) static uint32_t
crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
    static const size_t blocks[2] = { LONG, SHORT };
    uint64_t c0 = crc;

    for (int k = 0; k < 2; k++) {
        size_t block = blocks[k];
        uint32_t (*zeros)[256] = k == 0 ? zeros_long : zeros_short;

        while (n >= 3 * block) {
            uint64_t c1 = 0, c2 = 0, w0, w1, w2;
            const uint8_t *end = p + block;

            do {
                memcpy(&w0, p, 8);
                memcpy(&w1, p + block, 8);
                memcpy(&w2, p + 2 * block, 8);
                c0 = _mm_crc32_u64(c0, w0);
                c1 = _mm_crc32_u64(c1, w1);
                c2 = _mm_crc32_u64(c2, w2);
                p += 8;
            } while (p < end);
            c0 = shift(zeros, (uint32_t)c0) ^ (uint32_t)c1;
            c0 = shift(zeros, (uint32_t)c0) ^ (uint32_t)c2;
            p += 2 * block;
            n -= 3 * block;
        }
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c0 = _mm_crc32_u64(c0, w);
        p += 8;
        n -= 8;
    }
    crc = (uint32_t)c0;
    while (n-- > 0)
        crc = _mm_crc32_u8(crc, *p++);
    return crc;
}

static int have_hw(void)
{
    if (!__builtin_cpu_supports("sse4.2"))
        return 0;
    zeros_table(zeros_long, LONG);
    zeros_table(zeros_short, SHORT);
    return 1;
}
#else
static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
    (void)zeros_long;
    (void)zeros_short;
    (void)shift;
    (void)zeros_table;
    return crc_sw(crc, p, n);
}

static int have_hw(void)
{
    return 0;
}
#endif

uint32_t hrr_crc32c(uint32_t crc, const void *buf, size_t len)
{
    static int hw = -1;

    if (hw < 0)
        hw = have_hw();
    crc = ~crc;
    crc = hw ? crc_hw(crc, buf, len) : crc_sw(crc, buf, len);
    return ~crc;
}
