/* The sign of a zero in chapter 3's compiled solvers (dp.c, dp_blocked.c): an entry
 * whose value is 0 is -0 exactly when its initial value is -0 or one of its candidates
 * is (-0) + (-0), IEEE 754-2019's minimum (dp.c's header says why). These tests read a
 * float's bits; int32 has no signed zero, so its test is never true. */
#pragma once
#include <stdint.h>
#include <string.h>

static inline int is_negzero(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u == 0x80000000u;
}
static inline int is_poszero(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u == 0u;
}
static inline int never(int32_t x) { return (void)x, 0; }
