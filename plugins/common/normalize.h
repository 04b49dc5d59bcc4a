/*
 * upstream's helper.DefaultNormalizeScore (pkg/scheduler/framework/plugins/helper), shared by the
 * in-tree plugins whose NormalizeScore is exactly it (NodeAffinity, TaintToleration,
 * DynamicResources): scores scaled to [0, max_priority] by their maximum with Go's truncating
 * int64 division; reverse turns the scale over (max_priority - score). A maximum of 0 leaves the
 * scores as they are, or (reverse) sets them all to max_priority.
 *
 * Threads: any (it only touches scores).
 */
#ifndef KS_PLUGINS_COMMON_NORMALIZE_H
#define KS_PLUGINS_COMMON_NORMALIZE_H

#include <stddef.h>
#include <stdint.h>

#include "kubesched/plugin.h"

static inline void ks_default_normalize_score(int64_t max_priority, int reverse,
                                              ks_node_score *scores, size_t n)
{
    int64_t max = 0;
    for (size_t i = 0; i < n; i++)
        if (scores[i].score > max)
            max = scores[i].score;
    if (max == 0) {
        if (reverse)
            for (size_t i = 0; i < n; i++)
                scores[i].score = max_priority;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t score = max_priority * scores[i].score / max;
        scores[i].score = reverse ? max_priority - score : score;
    }
}

#endif
