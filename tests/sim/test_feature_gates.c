/*
 * --feature-gates on the command line (core/sched/features.c): upstream's flag syntax, the one
 * gate kubesched knows (OpportunisticBatching), and errors that say what is accepted.
 */
#include <criterion/criterion.h>

#include "simrun.h"

#define FIX KS_SOURCE_DIR "/tests/fixtures/sim/"

Test(feature_gates, opportunistic_batching_can_be_turned_off)
{
    char *out, err[2048];
    int rc = sim_run("simulate -o json --feature-gates OpportunisticBatching=false --cluster " FIX
                     "basic.yaml",
                     &out, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    char *on;
    rc = sim_run("simulate -o json --feature-gates=OpportunisticBatching=true --cluster " FIX
                 "basic.yaml",
                 &on, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    /* The default profile signs no pod (PodTopologySpread's system default constraints), so the
     * gate changes nothing here. */
    cr_assert_str_eq(out, on);
    free(out);
    free(on);
}

Test(feature_gates, an_unknown_gate_is_a_usage_error)
{
    char *out, err[2048];
    int rc = sim_run("simulate --feature-gates NoSuchGate=true --cluster " FIX "basic.yaml", &out,
                     err, sizeof(err));
    cr_assert_eq(rc, 2);
    cr_assert(strstr(err, "unrecognized feature gate: NoSuchGate"), "%s", err);
    cr_assert(strstr(err, "OpportunisticBatching"), "%s", err);
    free(out);
}

Test(feature_gates, a_value_that_is_no_boolean_is_a_usage_error)
{
    char *out, err[2048];
    int rc =
        sim_run("simulate --feature-gates OpportunisticBatching=maybe --cluster " FIX "basic.yaml",
                &out, err, sizeof(err));
    cr_assert_eq(rc, 2);
    cr_assert(strstr(err, "invalid value of OpportunisticBatching: maybe"), "%s", err);
    free(out);
}
