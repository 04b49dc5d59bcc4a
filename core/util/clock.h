/*
 * The monotonic clock, in one place: durations, deadlines and backoffs are measured with it, never
 * with the wall clock (which jumps). Header-only so that it inlines like the clock_gettime calls
 * it replaces. Threads: any.
 */
#ifndef KS_CORE_CLOCK_H
#define KS_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds (an arbitrary origin: only differences mean anything). */
static inline int64_t ks__clock_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The same in milliseconds. */
static inline int64_t ks__clock_now_ms(void) { return ks__clock_now_ns() / 1000000; }

#endif
