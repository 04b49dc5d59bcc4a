/*
 * Hot reload of the scheduler's profiles: a complete new "profile set" (one framework per profile,
 * every plugin instance created with its args) is built beside the running one, then swapped in on
 * the scheduling thread between two scheduling cycles. The queue, the cache, the nominator and the
 * binding pool are kept.
 *
 *   ks__profile_set_new        any thread (the reload thread): builds the set; the running
 *                              scheduler is not touched, so a failure changes nothing.
 *   ks__scheduler_request_swap any thread: hands the set to the scheduling thread (waking it if it
 *                              waits for pods) and waits until it was swapped in.
 *   ks__scheduler_apply_pending the scheduling thread, between cycles (ks__scheduler_schedule_one
 *                              calls it when its pop is woken): the swap itself, under the queue's
 *                              lock (ks__queue_reprofile): the queue hooks see the new profiles
 *                              from then on, every queued pod gets its profile again by
 *                              schedulerName and starts over without the old rejectors.
 *   ks__scheduler_reap_profiles any thread: frees the replaced sets that nothing uses any more.
 *
 * Drain: a set is referenced by the scheduler while it is current and by each binding cycle that
 * started under it (pods waiting on Permit included): a binding cycle runs to its end with the
 * plugin instances that assumed its pod. A replaced set is freed (its plugins destroyed, then its
 * owner released: the configuration, registry and shared objects the reload loaded, whose
 * dlclose therefore comes after the last instance is gone) only once its count is 0.
 *
 * Pods whose schedulerName no longer has a profile stay in the queue, gated (PreEnqueue refuses
 * them with "no profile ..."); each is reported once (ks_source_ops.failed: the PodScheduled=False
 * condition and a FailedScheduling event naming the missing schedulerName). A later reload that
 * brings the profile back schedules them.
 *
 * What a set does not change (fixed when the scheduler was created): parallelism, the queue's
 * backoffs, the feature gates, leader election, the client connection and the serving port (the
 * live layer reports a change of those and keeps the old values).
 */
#ifndef KS_CORE_RELOAD_H
#define KS_CORE_RELOAD_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "sched/scheduler.h"

typedef struct ks_profile_set ks_profile_set;

/* Builds the frameworks of cfg's profiles from plans (cfg->nprofiles entries) for scheduler s,
 * with s's metrics, worker pool and batching choice. The set borrows cfg and plans; when the set
 * is freed, release(owner) runs after its plugin instances are destroyed (release NULL: the caller
 * keeps them alive as long as s). 0, or a KS_E... code with err naming the profile and plugin (as
 * start-up words it); nothing is left behind on failure, and release is not called. Any thread;
 * s keeps scheduling meanwhile. */
int ks__profile_set_new(ks_scheduler *s, const ks_config *cfg, ks_profile_plan *plans,
                        void (*release)(void *owner), void *owner, ks_profile_set **out, char *err,
                        size_t errlen);
/* A set that was never swapped in: its instances destroyed, its owner released. NULL: no-op. */
void ks__profile_set_discard(ks_profile_set *set);

typedef struct ks_swap_result {
    uint64_t generation; /* of the set now current (1: the one the scheduler was created with) */
    int64_t swap_ns;     /* how long the scheduling thread spent swapping (its pause) */
    size_t requeued;     /* queued pods that went to activeQ/backoffQ under the new profiles */
    size_t orphaned;     /* pods left gated because their schedulerName has no profile now */
} ks_swap_result;

/* Hands set (from ks__profile_set_new for s; taken) to the scheduling thread and waits up to
 * timeout_ms for the swap. 1: swapped in (*res filled when not NULL); 0: still pending (no
 * scheduling loop runs now, e.g. a standby replica: the loop applies it when it starts, and a
 * newer request replaces a pending one, which is then discarded). Any thread but the scheduling
 * thread. */
int ks__scheduler_request_swap(ks_scheduler *s, ks_profile_set *set, int64_t timeout_ms,
                               ks_swap_result *res);
/* Scheduling thread, between cycles: swaps in the pending set, if any. 1 when it did. */
int ks__scheduler_apply_pending(ks_scheduler *s);
/* Frees every replaced set whose binding cycles are all done, and reports (ks_source_ops.failed)
 * the pods found without a profile since the last call. Returns the replaced sets still
 * draining. Any thread but the scheduling thread (a plugin's destroy may take time). */
size_t ks__scheduler_reap_profiles(ks_scheduler *s);
/* The generation of the current set (1 at creation, +1 per swap). Any thread. */
uint64_t ks__scheduler_profiles_generation(ks_scheduler *s);

#endif
