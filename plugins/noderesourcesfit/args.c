/*
 * NodeResourcesFitArgs (upstream types_pluginargs.go, SetDefaults_NodeResourcesFitArgs,
 * ValidateNodeResourcesFitArgs): the schema kubesched checks and defaults while it loads the
 * configuration, and the rules across fields, with upstream's messages and field paths.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kubesched/plugin.h"
#include "../common/args.h"

extern const ks_args_schema fit_args_schema; /* noderesourcesfit.c's descriptor points at these */
int fit_validate_args(const ks_args *a, ks_args_error *err);

static const ks_arg_field resource_spec_fields[] = {
    {"name", KS_ARG_STRING, NULL, NULL, 0, 0, 0},
    {"weight", KS_ARG_INT64, NULL, "1", KS_ARG_DEFAULT_IF_ZERO, 0, 0}, /* 0 or unset: 1 */
};
static const ks_args_schema resource_spec = KS_ARGS_SCHEMA(NULL, resource_spec_fields);
static const ks_arg_field shape_point_fields[] = {
    {"utilization", KS_ARG_INT32, NULL, NULL, 0, 0, 0},
    {"score", KS_ARG_INT32, NULL, NULL, 0, 0, 0},
};
static const ks_args_schema shape_point = KS_ARGS_SCHEMA(NULL, shape_point_fields);
static const ks_arg_field rtcr_fields[] = {
    {"shape", KS_ARG_OBJECT_LIST, &shape_point, NULL, 0, 0, 0},
};
static const ks_args_schema rtcr = KS_ARGS_SCHEMA(NULL, rtcr_fields);
static const ks_arg_field strategy_fields[] = {
    {"type", KS_ARG_STRING, NULL, NULL, 0, 0, 0},
    {"resources", KS_ARG_OBJECT_LIST, &resource_spec,
     "[{\"name\": \"cpu\", \"weight\": 1}, {\"name\": \"memory\", \"weight\": 1}]",
     KS_ARG_DEFAULT_IF_ZERO, 0, 0},
    {"requestedToCapacityRatio", KS_ARG_OBJECT, &rtcr, NULL, 0, 0, 0},
};
static const ks_args_schema strategy = KS_ARGS_SCHEMA(NULL, strategy_fields);
static const ks_arg_field fields[] = {
    {"ignoredResources", KS_ARG_STRING_LIST, NULL, NULL, 0, 0, 0},
    {"ignoredResourceGroups", KS_ARG_STRING_LIST, NULL, NULL, 0, 0, 0},
    {"scoringStrategy", KS_ARG_OBJECT, &strategy, "{\"type\": \"LeastAllocated\"}", 0, 0, 0},
};
const ks_args_schema fit_args_schema = KS_ARGS_SCHEMA("NodeResourcesFitArgs", fields);

#define STRATEGY "scoringStrategy"
#define RESOURCES STRATEGY ".resources"
#define RTCR STRATEGY ".requestedToCapacityRatio"
#define SHAPE RTCR ".shape"

static int validate_resources(const ks_args *a, ks_args_error *err)
{
    size_t n = ks_h_args_len(a, RESOURCES);
    for (size_t i = 0; i < n; i++) {
        char p[96], msg[200];
        int64_t w;
        snprintf(p, sizeof(p), RESOURCES "[%zu].weight", i);
        w = ks_h_args_int(a, p, 0);
        if (w <= 0 || w > 100) {
            const char *name;
            snprintf(p, sizeof(p), RESOURCES "[%zu].name", i);
            name = ks_h_args_str(a, p);
            /* A message of at most 200 bytes, as upstream's config checks wrote it before. */
            snprintf(msg, sizeof(msg), "resource weight of %s not in valid range (0, 100]",
                     name ? name : "");
            snprintf(p, sizeof(p), RESOURCES "[%zu].weight", i);
            return ks_args_invalid(err, p, "%s", msg);
        }
    }
    return 0;
}

static int validate_shape(const ks_args *a, ks_args_error *err)
{
    size_t n = ks_h_args_len(a, SHAPE);
    char p[96];
    if (n == 0)
        return ks_args_fail(err, SHAPE, "Required value: at least one point must be specified");
    for (size_t i = 1; i < n; i++) {
        int64_t prev, cur;
        snprintf(p, sizeof(p), SHAPE "[%zu].utilization", i - 1);
        prev = ks_h_args_int(a, p, 0);
        snprintf(p, sizeof(p), SHAPE "[%zu].utilization", i);
        cur = ks_h_args_int(a, p, 0);
        if (prev >= cur)
            return ks_args_fail(err, p,
                                "Invalid value: %" PRId64 ": values must be sorted in increasing "
                                "order",
                                cur);
    }
    for (size_t i = 0; i < n; i++) {
        int64_t u, s;
        snprintf(p, sizeof(p), SHAPE "[%zu].score", i);
        s = ks_h_args_int(a, p, 0);
        snprintf(p, sizeof(p), SHAPE "[%zu].utilization", i);
        u = ks_h_args_int(a, p, 0);
        if (u < 0 || u > 100)
            return ks_args_fail(err, p, "Invalid value: %" PRId64 ": not in valid range [0, 100]",
                                u);
        if (s < 0 || s > 10) {
            snprintf(p, sizeof(p), SHAPE "[%zu].score", i);
            return ks_args_fail(err, p, "Invalid value: %" PRId64 ": not in valid range [0, 10]",
                                s);
        }
    }
    return 0;
}

/* Ignored resources and groups are label names (a group without '/'), then the scoring strategy:
 * a known type, weights in (0, 100], a sorted shape in range exactly when the type asks for one. */
int fit_validate_args(const ks_args *a, ks_args_error *err)
{
    size_t n = ks_h_args_len(a, "ignoredResources");
    const char *type, *why;
    char p[96];
    int rtcr_type;
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof(p), "ignoredResources[%zu]", i);
        if ((why = ks_h_qualified_name_why(ks_h_args_str(a, p))))
            return ks_args_invalid(err, p, "%s", why);
    }
    n = ks_h_args_len(a, "ignoredResourceGroups");
    for (size_t i = 0; i < n; i++) {
        const char *g;
        snprintf(p, sizeof(p), "ignoredResourceGroups[%zu]", i);
        g = ks_h_args_str(a, p);
        if (strchr(g, '/'))
            return ks_args_invalid(err, p, "resource group name can't contain '/'");
        if ((why = ks_h_qualified_name_why(g)))
            return ks_args_invalid(err, p, "%s", why);
    }
    if (!ks_h_args_has(a, STRATEGY))
        return ks_args_fail(err, STRATEGY, "Required value: ScoringStrategy field is required");
    type = ks_h_args_str(a, STRATEGY ".type");
    rtcr_type = type && strcmp(type, "RequestedToCapacityRatio") == 0;
    if (!type ||
        (strcmp(type, "LeastAllocated") != 0 && strcmp(type, "MostAllocated") != 0 && !rtcr_type))
        return ks_args_fail(err, STRATEGY ".type",
                            "Unsupported value: \"%s\": supported values: \"LeastAllocated\", "
                            "\"MostAllocated\", \"RequestedToCapacityRatio\"",
                            type ? type : "");
    if (validate_resources(a, err) != 0)
        return KS_EINVAL;
    if (rtcr_type) {
        if (!ks_h_args_has(a, RTCR))
            return ks_args_fail(err, RTCR,
                                "Required value: must be specified when type is "
                                "RequestedToCapacityRatio");
        return validate_shape(a, err);
    }
    if (ks_h_args_has(a, RTCR))
        return ks_args_fail(err, RTCR,
                            "Forbidden: must be nil when type is not RequestedToCapacityRatio");
    return 0;
}
