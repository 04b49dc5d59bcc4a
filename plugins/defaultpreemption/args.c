/*
 * DefaultPreemptionArgs (upstream types_pluginargs.go, SetDefaults_DefaultPreemptionArgs,
 * ValidateDefaultPreemptionArgs): the schema kubesched checks and defaults while it loads the
 * configuration, and the rules across fields, with upstream's messages and field paths.
 */
#include "defaultpreemption_int.h"

static const ks_arg_field fields[] = {
    {"minCandidateNodesPercentage", KS_ARG_INT32, NULL, "10", KS_ARG_BOUNDED, 0, 100},
    {"minCandidateNodesAbsolute", KS_ARG_INT32, NULL, "100", 0, 0, 0},
};
const ks_args_schema dp_args_schema = KS_ARGS_SCHEMA("DefaultPreemptionArgs", fields);

/* After the defaults and the percentage's bounds: the absolute number is not negative, and the
 * two are not both zero. */
int dp_validate_args(const ks_args *args, ks_args_error *err)
{
    int64_t pct = 0, abs_ = 0;
    (void)ks_args_get_int(args, "minCandidateNodesPercentage", &pct);
    (void)ks_args_get_int(args, "minCandidateNodesAbsolute", &abs_);
    if (abs_ < 0)
        return ks_args_invalid(err, "minCandidateNodesAbsolute", "not in valid range [0, inf)");
    if (pct == 0 && abs_ == 0)
        return ks_args_invalid(err, "minCandidateNodesPercentage",
                               "cannot be zero at the same time as minCandidateNodesAbsolute");
    return 0;
}
