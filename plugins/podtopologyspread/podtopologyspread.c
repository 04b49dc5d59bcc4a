/*
 * PodTopologySpread (upstream plugins/podtopologyspread/plugin.go, v1.34): spreads matching pods
 * evenly across topology domains. DoNotSchedule constraints filter (filtering.c), ScheduleAnyway
 * constraints score (scoring.c); common.c holds what both share.
 *
 * Args (PodTopologySpreadArgs, defaulted and validated by the config layer):
 *   defaultingType      "System" (default): when a pod has no constraints of its own, spread it
 *                       by {maxSkew 3, kubernetes.io/hostname, ScheduleAnyway} and {maxSkew 5,
 *                       topology.kubernetes.io/zone, ScheduleAnyway}; "List": by
 *   defaultConstraints  [{maxSkew, topologyKey, whenUnsatisfiable, ...}].
 * Default constraints select the pods that the pod's Services, ReplicationControllers,
 * ReplicaSets and StatefulSets select; a pod none of them selects gets none.
 */
#include <stdio.h>
#include <string.h>

#include "podtopologyspread_int.h"
#include "../common/sign.h"

#define HOSTNAME_KEY "kubernetes.io/hostname"
#define ZONE_KEY "topology.kubernetes.io/zone"

static void pts_destroy(void *self)
{
    pts_plugin *pl = self;
    if (!pl)
        return;
    ks_free(pl->defaults);
    pts_cache_free(pl->cache);
    ks_free(pl);
}

static int parse_policy(const ks_args *args, const char *path, ks_inclusion_policy dflt,
                        ks_inclusion_policy *out, ks_error *err)
{
    const char *v;
    *out = dflt;
    if (ks_args_get_string(args, path, &v) != 0)
        return 0;
    if (strcmp(v, "Honor") == 0)
        *out = KS_POLICY_HONOR;
    else if (strcmp(v, "Ignore") == 0)
        *out = KS_POLICY_IGNORE;
    else {
        ks_error_set(err, "%s: Unsupported value: \"%s\": supported values: \"Honor\", \"Ignore\"",
                     path, v);
        return -1;
    }
    return 0;
}

/* One defaultConstraints[i] entry. The config layer has validated it already; the checks here keep
 * a plugin created some other way (tests, another host) from running on nonsense. */
static int parse_default(const ks_args *args, size_t i, pts_default *d, ks_error *err)
{
    char path[128];
    const char *key = NULL, *when = NULL;
    int64_t skew = 0, min_domains = 1;
    snprintf(path, sizeof(path), "defaultConstraints[%zu].maxSkew", i);
    if (ks_args_get_int(args, path, &skew) != 0 || skew <= 0 || skew > INT32_MAX) {
        ks_error_set(err, "%s: Invalid value: not in valid range (0, inf)", path);
        return -1;
    }
    snprintf(path, sizeof(path), "defaultConstraints[%zu].topologyKey", i);
    if (ks_args_get_string(args, path, &key) != 0 || !key[0]) {
        ks_error_set(err, "%s: Required value: can not be empty", path);
        return -1;
    }
    snprintf(path, sizeof(path), "defaultConstraints[%zu].whenUnsatisfiable", i);
    if (ks_args_get_string(args, path, &when) != 0 ||
        (strcmp(when, "DoNotSchedule") != 0 && strcmp(when, "ScheduleAnyway") != 0)) {
        ks_error_set(err,
                     "%s: Unsupported value: \"%s\": supported values: \"DoNotSchedule\", "
                     "\"ScheduleAnyway\"",
                     path, when ? when : "");
        return -1;
    }
    snprintf(path, sizeof(path), "defaultConstraints[%zu].minDomains", i);
    if (ks_args_get_int(args, path, &min_domains) != 0 || min_domains <= 0 ||
        min_domains > INT32_MAX)
        min_domains = 1;
    d->max_skew = (int32_t)skew;
    d->key = ks_intern(key);
    d->when = strcmp(when, "ScheduleAnyway") == 0 ? KS_SCHEDULE_ANYWAY : KS_DO_NOT_SCHEDULE;
    d->min_domains = (int32_t)min_domains;
    snprintf(path, sizeof(path), "defaultConstraints[%zu].nodeAffinityPolicy", i);
    if (parse_policy(args, path, KS_POLICY_HONOR, &d->affinity_policy, err) != 0)
        return -1;
    snprintf(path, sizeof(path), "defaultConstraints[%zu].nodeTaintsPolicy", i);
    return parse_policy(args, path, KS_POLICY_IGNORE, &d->taints_policy, err);
}

/* create: main thread, before scheduling starts. */
static void *pts_create(const ks_args *args, ks_error *err)
{
    const char *type = "System";
    size_t n = 0;
    pts_plugin *pl;
    if (!KS_HOST_HAS(pod_topology_spread_constraints) || !KS_HOST_HAS(pod_owner_selectors)) {
        ks_error_set(err,
                     PTS_NAME " needs a host with plugin ABI 1.1 or later (the host offers %u.%u)",
                     ks_host ? ks_host->abi_major : 0, ks_host ? ks_host->abi_minor : 0);
        return NULL;
    }
    if (ks_args_get_string(args, "defaultingType", &type) != 0 || !type[0])
        type = "System";
    if (ks_args_count(args, "defaultConstraints", &n) != 0)
        n = 0;
    pl = ks_alloc(sizeof(*pl));
    if (!pl) {
        ks_error_set(err, PTS_NAME ": out of memory");
        return NULL;
    }
    memset(pl, 0, sizeof(*pl));
    pl->cache = pts_cache_new();
    if (!pl->cache) {
        ks_error_set(err, PTS_NAME ": out of memory");
        goto fail;
    }
    pl->hostname_key = ks_intern(HOSTNAME_KEY);
    pl->metadata_name = ks_intern("metadata.name");
    if (strcmp(type, "System") == 0) {
        if (n > 0) {
            ks_error_set(err, "defaultingType: Invalid value: \"System\": when .defaultConstraints "
                              "are not empty");
            goto fail;
        }
        n = 2;
        pl->system_defaulted = 1;
    } else if (strcmp(type, "List") != 0) {
        ks_error_set(err,
                     "defaultingType: Unsupported value: \"%s\": supported values: \"System\", "
                     "\"List\"",
                     type);
        goto fail;
    }
    pl->defaults = n ? ks_alloc(n * sizeof(*pl->defaults)) : NULL;
    if (n && !pl->defaults) {
        ks_error_set(err, PTS_NAME ": out of memory");
        goto fail;
    }
    pl->ndefaults = n;
    if (pl->system_defaulted) {
        pl->defaults[0] = (pts_default){3, pl->hostname_key, KS_SCHEDULE_ANYWAY,
                                        1, KS_POLICY_HONOR,  KS_POLICY_IGNORE};
        pl->defaults[1] = (pts_default){5, ks_intern(ZONE_KEY), KS_SCHEDULE_ANYWAY,
                                        1, KS_POLICY_HONOR,     KS_POLICY_IGNORE};
        return pl;
    }
    for (size_t i = 0; i < n; i++)
        if (parse_default(args, i, &pl->defaults[i], err) != 0)
            goto fail;
    return pl;
fail:
    pts_destroy(pl);
    return NULL;
}

/* upstream EventsToRegister (v1.37), with the hints of hints.c: assigned pods added, relabelled
 * or deleted; the pending pod itself gaining a toleration (NodeTaintsPolicy Honor) or relabelled
 * (its matchLabelKeys / self-match); nodes added, deleted, relabelled or retainted. */
static size_t pts_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_ASSIGNED_POD, KS_ACT_ADD | KS_ACT_UPDATE_POD_LABEL | KS_ACT_DELETE},
         pts_after_assigned_pod_change},
        {{KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_TOLERATIONS | KS_ACT_UPDATE_POD_LABEL},
         pts_after_target_pod_change},
        {{KS_RES_NODE,
          KS_ACT_ADD | KS_ACT_DELETE | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT},
         pts_after_node_change},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* upstream PodTopologySpread.SignPod: no fragments, but a pod with constraints, or any pod while
 * default constraints are set (defaultingType System always sets them), is not signable: with
 * the default profile no pod is ever batched, as upstream. */
static ks_code pts_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    const pts_plugin *pl = (const pts_plugin *)self;
    const ks_topology_spread_constraint *c;
    (void)sig;
    if (ks_pod_topology_spread_constraints(pod, &c) > 0) {
        ks_status_reason(st, "pods with topology constraints are not signable");
        return KS_UNSCHEDULABLE;
    }
    if (pl->ndefaults > 0) {
        ks_status_reason(st, "pods with default topology constraints are not signable");
        return KS_UNSCHEDULABLE;
    }
    return KS_SUCCESS;
}

const ks_plugin_desc ks_plugin_pod_topology_spread = {
    .size = sizeof(ks_plugin_desc),
    .name = PTS_NAME,
    .create = pts_create,
    .destroy = pts_destroy,
    .pre_filter = pts_pre_filter,
    .pre_filter_add_pod = pts_add_pod,
    .pre_filter_remove_pod = pts_remove_pod,
    .filter = pts_filter,
    .pre_score = pts_pre_score,
    .score = pts_score,
    .normalize_score = pts_normalize_score,
    .events_with_hints = pts_events,
    .args_schema = &pts_args_schema,
    .validate_args = pts_validate_args,
    .sign = pts_sign,
};
