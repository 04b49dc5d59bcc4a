/*
 * Doubles (cJSON keeps every JSON number as one) to integers. C leaves the conversion of a value
 * outside the target's range undefined (UBSan stops on it; on x86 it gives INT64_MIN), and a
 * file or a plugin can hold any number: these saturate instead, and NaN becomes 0.
 *
 * Threads: any; pure functions.
 */
#ifndef KS_CORE_NUMCONV_H
#define KS_CORE_NUMCONV_H

#include <stdint.h>

/* d truncated toward zero, clamped to [INT64_MIN, INT64_MAX]. */
static inline int64_t ks__sat_i64(double d)
{
    if (d != d)
        return 0;
    if (d >= 9223372036854775808.0) /* 2^63: the first double past INT64_MAX */
        return INT64_MAX;
    if (d <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)d;
}

/* d truncated toward zero, clamped to [INT32_MIN, INT32_MAX]. */
static inline int32_t ks__sat_i32(double d)
{
    if (d != d)
        return 0;
    if (d >= 2147483647.0)
        return INT32_MAX;
    if (d <= -2147483648.0)
        return INT32_MIN;
    return (int32_t)d;
}

/* Whether d is an integer that int64_t holds exactly (the test itself converts nothing out of
 * range). */
static inline int ks__is_i64(double d)
{
    return d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(int64_t)d;
}

#endif
