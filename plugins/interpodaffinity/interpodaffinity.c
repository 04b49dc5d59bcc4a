/*
 * InterPodAffinity (upstream plugins/interpodaffinity/plugin.go, v1.34): the descriptor, its
 * args and the events that may make a rejected pod schedulable. Filtering lives in filtering.c,
 * scoring in scoring.c, shared matching in common.c.
 *
 * Args (InterPodAffinityArgs): hardPodAffinityWeight (0..100, default 1),
 * ignorePreferredTermsOfExistingPods (default false).
 */
#include "interpodaffinity_int.h"
#include "../common/sign.h"

static void *ipa_create(const ks_args *args, ks_error *err)
{
    int64_t weight = 1;
    int ignore = 0;
    int rc = ks_args_get_int(args, "hardPodAffinityWeight", &weight);
    if (rc != 0 && rc != KS_ENOTFOUND) {
        ks_error_set(err, IPA_NAME ": hardPodAffinityWeight: must be an integer");
        return NULL;
    }
    if (weight < 0 || weight > 100) {
        ks_error_set(err, IPA_NAME ": hardPodAffinityWeight: %lld is not in valid range [0, 100]",
                     (long long)weight);
        return NULL;
    }
    rc = ks_args_get_bool(args, "ignorePreferredTermsOfExistingPods", &ignore);
    if (rc != 0 && rc != KS_ENOTFOUND) {
        ks_error_set(err, IPA_NAME ": ignorePreferredTermsOfExistingPods: must be a boolean");
        return NULL;
    }
    ipa_plugin *pl = ks_alloc(sizeof(*pl));
    if (!pl) {
        ks_error_set(err, IPA_NAME ": out of memory");
        return NULL;
    }
    pl->hard_pod_affinity_weight = (int32_t)weight;
    pl->ignore_preferred_terms_of_existing = rc == 0 && ignore;
    return pl;
}

static void ipa_destroy(void *self) { ks_free(self); }

/* upstream EventsToRegister (v1.37), with the hints of hints.c: assigned pods added, relabelled
 * or deleted; the pending pod itself relabelled (always Queue: another pod's anti-affinity may
 * no longer select it; isSchedulableAfterTargetPodUpdateLabel); nodes added or relabelled. */
static size_t ipa_events(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_ASSIGNED_POD, KS_ACT_ADD | KS_ACT_UPDATE_POD_LABEL | KS_ACT_DELETE},
         ipa_after_assigned_pod_change},
        {{KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_LABEL}, NULL},
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL}, ipa_after_node_change},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* InterPodAffinityArgs (upstream SetDefaults_InterPodAffinityArgs, ValidateInterPodAffinityArgs):
 * kubesched checks the shape, fills the defaults and checks the weight's range while it loads the
 * configuration, so create() reads valid args. */
static const ks_arg_field ipa_arg_fields[] = {
    {"hardPodAffinityWeight", KS_ARG_INT32, NULL, "1", KS_ARG_BOUNDED, 0, 100},
    {"ignorePreferredTermsOfExistingPods", KS_ARG_BOOL, NULL, "false", 0, 0, 0},
};
static const ks_args_schema ipa_args_schema =
    KS_ARGS_SCHEMA("InterPodAffinityArgs", ipa_arg_fields);

/* upstream InterPodAffinity.SignPod: a pod with pod (anti-)affinity is not signable (its result
 * depends on the pods placed before it); else its labels, which other pods' terms may match,
 * unless ignorePreferredTermsOfExistingPods makes them irrelevant. */
static ks_code ipa_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    const ipa_plugin *pl = (const ipa_plugin *)self;
    if (ks_pod_affinity_of(pod)) {
        ks_status_reason(st, "pods with InterPodAffinity are not signable");
        return KS_UNSCHEDULABLE;
    }
    if (pl->ignore_preferred_terms_of_existing)
        return KS_SUCCESS;
    const ks_label *labels;
    size_t n = ks_pod_labels(pod, &labels);
    ks_jbuf b = {0};
    ks_jb_labels(&b, labels, n);
    return ks_jb_sign(&b, sig, KS_SIGN_LABELS, st);
}

const ks_plugin_desc ks_plugin_inter_pod_affinity = {
    .size = sizeof(ks_plugin_desc),
    .name = IPA_NAME,
    .create = ipa_create,
    .destroy = ipa_destroy,
    .pre_filter = ipa_pre_filter,
    .pre_filter_add_pod = ipa_add_pod,
    .pre_filter_remove_pod = ipa_remove_pod,
    .filter = ipa_filter,
    .pre_score = ipa_pre_score,
    .score = ipa_score,
    .normalize_score = ipa_normalize_score,
    .events_with_hints = ipa_events,
    .args_schema = &ipa_args_schema,
    .sign = ipa_sign,
};
