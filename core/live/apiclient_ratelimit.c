/*
 * The client-side rate limit (see apiclient.h): a token bucket with reservations, the shape of
 * golang.org/x/time/rate's Limiter.Wait that client-go's token bucket rate limiter uses. Tokens
 * may go negative: a negative count is the queue of callers already promised a later slot, so a
 * new caller waits behind them.
 */
#include <pthread.h>
#include <stdlib.h>

#include "live/apiclient.h"
#include "kubesched/plugin.h"

struct ks_ratelimit {
    pthread_mutex_t mu;
    double qps, burst;
    double tokens; /* guarded by mu */
    int64_t last;  /* guarded by mu: clock time tokens was computed at */
    ks_clock_fn clock;
    void *clock_ud;
};

int ks__ratelimit_create(double qps, int burst, ks_clock_fn clock, void *clock_ud,
                         ks_ratelimit **out)
{
    *out = NULL;
    if (!(qps > 0) || burst < 1)
        return KS_EINVAL;
    ks_ratelimit *rl = calloc(1, sizeof(*rl));
    if (!rl)
        return KS_ENOMEM;
    pthread_mutex_init(&rl->mu, NULL);
    rl->qps = qps;
    rl->burst = burst;
    rl->tokens = burst; /* starts full, as x/time/rate */
    rl->clock = clock ? clock : ks__clock_monotonic;
    rl->clock_ud = clock_ud;
    rl->last = rl->clock(clock_ud);
    *out = rl;
    return 0;
}

void ks__ratelimit_destroy(ks_ratelimit *rl)
{
    if (!rl)
        return;
    pthread_mutex_destroy(&rl->mu);
    free(rl);
}

int64_t ks__ratelimit_reserve(ks_ratelimit *rl)
{
    pthread_mutex_lock(&rl->mu);
    int64_t now = rl->clock(rl->clock_ud);
    if (now > rl->last) {
        rl->tokens += (double)(now - rl->last) * rl->qps / 1e9;
        if (rl->tokens > rl->burst)
            rl->tokens = rl->burst;
        rl->last = now;
    }
    rl->tokens -= 1.0;
    int64_t wait = 0;
    if (rl->tokens < 0)
        wait = (int64_t)(-rl->tokens / rl->qps * 1e9 + 0.5);
    pthread_mutex_unlock(&rl->mu);
    return wait;
}
