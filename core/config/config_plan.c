/*
 * The per-profile plan: what upstream's framework.go NewFramework builds from a defaulted profile,
 * checked the same way, against kubesched's plugin registry.
 *
 *   1. point-specific lists (in NewFramework's getExtensionPoints order): unknown plugin, plugin
 *      that does not implement the point, duplicates;
 *   2. expandMultiPointPlugins: per point (skipped when its disabled list has "*"), each
 *      multiPoint plugin that implements the point and is not disabled there; one also listed in
 *      the point's own enabled list is an override; order = overrides, multiPoint-only, the rest;
 *   3. exactly one QueueSort, at least one Bind;
 *   4. getScoreWeights: score.enabled then multiPoint.enabled, first occurrence wins, 0 => 1,
 *      overflow check;
 *   5. across profiles: the same queue sort plugin and args (profile.NewMap).
 *
 * kubesched's addition: an upstream default plugin that kubesched does not ship yet is skipped
 * silently when it only came from the default set (and listed in plan.unavailable), and refused
 * with a clear sentence when the user enabled it.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "config/config_int.h"
#include "config/registry.h"

#define HAS_SLOT(d, f) ((d)->size >= offsetof(ks_plugin_desc, f) + sizeof((d)->f) && (d)->f != NULL)

int ks__desc_implements(const ks_plugin_desc *d, ks_point p)
{
    if (!d)
        return 0;
    switch (p) {
    case KS_PT_PRE_ENQUEUE:
        return HAS_SLOT(d, pre_enqueue);
    case KS_PT_QUEUE_SORT:
        return HAS_SLOT(d, less);
    case KS_PT_PRE_FILTER:
        return HAS_SLOT(d, pre_filter);
    case KS_PT_FILTER:
        return HAS_SLOT(d, filter);
    case KS_PT_POST_FILTER:
        return HAS_SLOT(d, post_filter);
    case KS_PT_PRE_SCORE:
        return HAS_SLOT(d, pre_score);
    case KS_PT_SCORE:
        return HAS_SLOT(d, score);
    case KS_PT_RESERVE:
        return HAS_SLOT(d, reserve) || HAS_SLOT(d, unreserve);
    case KS_PT_PERMIT:
        return HAS_SLOT(d, permit);
    case KS_PT_PRE_BIND:
        return HAS_SLOT(d, pre_bind);
    case KS_PT_BIND:
        return HAS_SLOT(d, bind);
    case KS_PT_POST_BIND:
        return HAS_SLOT(d, post_bind);
    default:
        return 0;
    }
}

/* NewFramework's getExtensionPoints order, which decides which error is reported first. */
static const ks_point upstream_order[KS_PT_COUNT] = {
    KS_PT_PRE_FILTER, KS_PT_FILTER, KS_PT_POST_FILTER, KS_PT_RESERVE,
    KS_PT_PRE_SCORE,  KS_PT_SCORE,  KS_PT_PRE_BIND,    KS_PT_BIND,
    KS_PT_POST_BIND,  KS_PT_PERMIT, KS_PT_PRE_ENQUEUE, KS_PT_QUEUE_SORT};

typedef struct plan_ctx {
    cfg_load L; /* only for messages */
    const ks_config *cfg;
    const struct ks_registry *reg;
    size_t prof;
} plan_ctx;

static int oom(plan_ctx *c) { return ks__cfg_oom(&c->L); }

static void list_append(char *buf, size_t len, size_t *off, const char *s)
{
    int w;
    if (*off >= len)
        return;
    w = snprintf(buf + *off, len - *off, "%s%s", *off ? ", " : "", s);
    if (w > 0)
        *off += (size_t)w;
}

/* "A, B, C" of the registered plugins that implement p (any point when p == KS_PT_MULTI). */
static void registered_for(const struct ks_registry *reg, ks_point p, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ks__registry_count(reg); i++) {
        const ks_plugin_desc *d = ks__registry_at(reg, i);
        int any = p != KS_PT_MULTI;
        for (int q = 0; !any && q < KS_PT_COUNT; q++)
            any = ks__desc_implements(d, (ks_point)q);
        if (any && (p == KS_PT_MULTI || ks__desc_implements(d, p)))
            list_append(buf, len, &off, d->name);
    }
    if (!buf[0])
        snprintf(buf, len, "none");
}

static void implemented_by(const ks_plugin_desc *d, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int q = 0; q < KS_PT_COUNT; q++)
        if (ks__desc_implements(d, (ks_point)q))
            list_append(buf, len, &off, ks__point_name((ks_point)q));
    if (!buf[0])
        snprintf(buf, len, "no extension point");
}

static int add_unavailable(ks_profile_plan *plan, const char *name)
{
    const char *const *all;
    size_t n = ks__registry_unavailable_defaults(&all);
    const char *stable = NULL;
    const char **grown;
    for (size_t i = 0; i < plan->nunavailable; i++)
        if (strcmp(plan->unavailable[i], name) == 0)
            return 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i], name) == 0)
            stable = all[i];
    if (!stable)
        return 0;
    grown = realloc(plan->unavailable, (plan->nunavailable + 1) * sizeof(*grown));
    if (!grown)
        return KS_ENOMEM;
    plan->unavailable = grown;
    plan->unavailable[plan->nunavailable++] = stable;
    return 0;
}

/* For a plugin that is nowhere: how kubesched loads an out-of-tree one (the usual cause is a
 * pluginConfig without kubeschedPluginPath, or none at all). Empty when it has a path (then
 * the shared object did not provide it, which the loader already said). */
static void out_of_tree_hint(const plan_ctx *c, const char *name, char *out, size_t len)
{
    const ks_profile_config *pc = &c->cfg->profiles[c->prof];
    out[0] = '\0';
    for (size_t i = 0; i < pc->nplugin_configs; i++) {
        const ks_plugin_config *e = &pc->plugin_configs[i];
        if (strcmp(e->name, name) != 0)
            continue;
        if (!e->so_path)
            snprintf(out, len,
                     "; if it is an out-of-tree plugin, name its shared object in %s.args."
                     "kubeschedPluginPath",
                     e->field);
        return;
    }
    snprintf(out, len,
             "; if it is an out-of-tree plugin, add a pluginConfig entry for it to profiles[%zu] "
             "whose args give kubeschedPluginPath: the .so that defines it",
             c->prof);
}

/* The descriptor of ref: 1 found, 0 skipped (an unavailable default), <0 error. */
static int lookup(plan_ctx *c, ks_profile_plan *plan, const ks_plugin_ref *ref, ks_point p,
                  const ks_plugin_desc **out)
{
    char valid[1024];
    const char *field = ks__point_field(p);
    *out = ks__registry_find(c->reg, ref->name);
    if (*out)
        return 1;
    if (ks__registry_is_unavailable_default(ref->name)) {
        if (ref->from_default)
            return add_unavailable(plan, ref->name) == 0 ? 0 : oom(c);
        return ks__cfg_fail(&c->L, KS_ENOTFOUND,
                            "profiles[%zu].plugins.%s: plugin \"%s\" is not available in "
                            "kubesched yet (it is one of upstream's default plugins that "
                            "kubesched does not ship); remove it from "
                            "profiles[%zu].plugins.%s.enabled",
                            c->prof, field, ref->name, c->prof, field);
    }
    registered_for(c->reg, p, valid, sizeof(valid));
    char hint[512];
    out_of_tree_hint(c, ref->name, hint, sizeof(hint));
    return ks__cfg_fail(&c->L, KS_ENOTFOUND,
                        "profiles[%zu].plugins.%s: %s \"%s\" does not exist (registered %s%s"
                        "plugins: %s)%s",
                        c->prof, field, ks__point_name(p), ref->name,
                        p == KS_PT_MULTI ? "" : ks__point_name(p), p == KS_PT_MULTI ? "" : " ",
                        valid, hint);
}

static int in_names(char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

static ssize_t find_planned(const ks_planned_plugin *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i].name, name) == 0)
            return (ssize_t)i;
    return -1;
}

/* Step 1: one point-specific list. */
static int build_point(plan_ctx *c, ks_profile_plan *plan, ks_point p)
{
    const ks_plugin_set *set = &plan->profile->plugins[p];
    const ks_plugin_set *mp = &plan->profile->plugins[KS_PT_MULTI];
    size_t cap = set->nenabled + mp->nenabled;
    if (cap && !(plan->point[p] = calloc(cap, sizeof(ks_planned_plugin))))
        return oom(c);
    for (size_t j = 0; j < set->nenabled; j++) {
        const ks_plugin_desc *d;
        int rc = lookup(c, plan, &set->enabled[j], p, &d);
        if (rc < 0)
            return rc;
        if (rc == 0)
            continue;
        if (!ks__desc_implements(d, p)) {
            char impl[256];
            implemented_by(d, impl, sizeof(impl));
            return ks__cfg_fail(&c->L, KS_EINVAL,
                                "profiles[%zu].plugins.%s: plugin \"%s\" does not extend %s plugin "
                                "(it implements: %s)",
                                c->prof, ks__point_field(p), d->name, ks__point_name(p), impl);
        }
        if (find_planned(plan->point[p], plan->npoint[p], d->name) >= 0)
            return ks__cfg_fail(&c->L, KS_EEXIST,
                                "profiles[%zu].plugins.%s: plugin \"%s\" already registered as "
                                "\"%s\"",
                                c->prof, ks__point_field(p), d->name, ks__point_name(p));
        plan->point[p][plan->npoint[p]].name = d->name;
        plan->point[p][plan->npoint[p]].desc = d;
        plan->npoint[p]++;
    }
    return 0;
}

/* Step 2: expandMultiPointPlugins for one point. */
static int expand_point(plan_ctx *c, ks_profile_plan *plan, ks_point p)
{
    const ks_plugin_set *set = &plan->profile->plugins[p];
    const ks_plugin_set *mp = &plan->profile->plugins[KS_PT_MULTI];
    size_t n = plan->npoint[p], nmp = 0, out = 0;
    ks_planned_plugin *own = plan->point[p];
    ks_planned_plugin *multi = NULL, *merged = NULL;
    unsigned char *override = NULL;
    int rc = 0;

    if (in_names(set->disabled, set->ndisabled, "*"))
        return 0;
    if (!mp->nenabled)
        return 0;
    multi = calloc(mp->nenabled, sizeof(*multi));
    merged = calloc(n + mp->nenabled, sizeof(*merged));
    override = calloc(n + 1, 1);
    if (!multi || !merged || !override) {
        rc = oom(c);
        goto out;
    }
    for (size_t j = 0; j < mp->nenabled; j++) {
        const ks_plugin_desc *d;
        ssize_t at;
        rc = lookup(c, plan, &mp->enabled[j], KS_PT_MULTI, &d);
        if (rc < 0)
            goto out;
        rc = 0;
        if (!d || !ks__desc_implements(d, p) || in_names(set->disabled, set->ndisabled, d->name))
            continue;
        if ((at = find_planned(own, n, d->name)) >= 0) {
            override[at] = 1;
            continue;
        }
        if (find_planned(multi, nmp, d->name) >= 0) {
            rc = ks__cfg_fail(&c->L, KS_EEXIST,
                              "profiles[%zu].plugins.multiPoint: plugin \"%s\" already "
                              "registered as \"%s\"",
                              c->prof, d->name, ks__point_name(p));
            goto out;
        }
        multi[nmp].name = d->name;
        multi[nmp].desc = d;
        nmp++;
    }
    for (size_t j = 0; j < n; j++)
        if (override[j])
            merged[out++] = own[j];
    for (size_t j = 0; j < nmp; j++)
        merged[out++] = multi[j];
    for (size_t j = 0; j < n; j++)
        if (!override[j])
            merged[out++] = own[j];
    free(plan->point[p]);
    plan->point[p] = merged;
    plan->npoint[p] = out;
    merged = NULL;
out:
    free(multi);
    free(merged);
    free(override);
    return rc;
}

/* Step 4: getScoreWeights. */
static int score_weights(plan_ctx *c, ks_profile_plan *plan)
{
    const ks_plugin_set *lists[2] = {&plan->profile->plugins[KS_PT_SCORE],
                                     &plan->profile->plugins[KS_PT_MULTI]};
    const char **seen;
    size_t nseen = 0;
    int64_t total = 0;
    int rc = 0;
    seen = calloc(lists[0]->nenabled + lists[1]->nenabled + 1, sizeof(*seen));
    if (!seen)
        return oom(c);
    for (int l = 0; l < 2 && rc == 0; l++) {
        for (size_t j = 0; j < lists[l]->nenabled && rc == 0; j++) {
            const ks_plugin_ref *r = &lists[l]->enabled[j];
            const ks_plugin_desc *d = ks__registry_find(c->reg, r->name);
            ssize_t at;
            int64_t w;
            int dup = 0;
            if (!d || !ks__desc_implements(d, KS_PT_SCORE))
                continue;
            for (size_t k = 0; k < nseen && !dup; k++)
                dup = strcmp(seen[k], d->name) == 0;
            if (dup)
                continue; /* the first occurrence wins: score.enabled before multiPoint */
            seen[nseen++] = d->name;
            w = r->weight > 0 ? r->weight : 1;
            if (w * KS_MAX_NODE_SCORE > INT64_MAX - total) {
                rc = ks__cfg_fail(&c->L, KS_ERANGE,
                                  "profiles[%zu].plugins: score plugins: total score of Score "
                                  "plugins could overflow",
                                  c->prof);
                break;
            }
            total += w * KS_MAX_NODE_SCORE;
            at = find_planned(plan->point[KS_PT_SCORE], plan->npoint[KS_PT_SCORE], d->name);
            if (at >= 0)
                plan->point[KS_PT_SCORE][at].weight = (int32_t)w;
        }
    }
    free(seen);
    for (size_t j = 0; j < plan->npoint[KS_PT_SCORE]; j++)
        if (plan->point[KS_PT_SCORE][j].weight == 0)
            plan->point[KS_PT_SCORE][j].weight = 1;
    return rc;
}

static const cJSON *args_of(const ks_profile_config *p, const char *name)
{
    for (size_t i = 0; i < p->nplugin_configs; i++)
        if (strcmp(p->plugin_configs[i].name, name) == 0)
            return p->plugin_configs[i].args;
    return NULL;
}

static int build_instances(plan_ctx *c, ks_profile_plan *plan)
{
    size_t cap = 0;
    for (int p = 0; p < KS_PT_COUNT; p++)
        cap += plan->npoint[p];
    if (!cap)
        return 0;
    plan->instances = calloc(cap, sizeof(*plan->instances));
    if (!plan->instances)
        return oom(c);
    for (int p = 0; p < KS_PT_COUNT; p++) {
        for (size_t j = 0; j < plan->npoint[p]; j++) {
            const ks_planned_plugin *pp = &plan->point[p][j];
            int seen = 0;
            for (size_t k = 0; k < plan->ninstances && !seen; k++)
                seen = strcmp(plan->instances[k].name, pp->name) == 0;
            if (seen)
                continue;
            plan->instances[plan->ninstances].name = pp->name;
            plan->instances[plan->ninstances].desc = pp->desc;
            plan->instances[plan->ninstances].args = args_of(plan->profile, pp->name);
            plan->ninstances++;
        }
    }
    return 0;
}

/* The v1.37 pod-group sets (placementGenerate, placementScore, podGroupPostFilter), after
 * QueueSort in getExtensionPoints: the same unknown-plugin and does-not-extend checks as step 1.
 * No plugin kubesched can load implements them (the SDK has no such slot), so an enabled entry
 * is always refused; the pod-group cycle they belong to (GenericWorkload) is off by default. */
static int check_pod_group_point(plan_ctx *c, ks_profile_plan *plan, ks_point p)
{
    const ks_plugin_set *set = &plan->profile->plugins[p];
    for (size_t j = 0; j < set->nenabled; j++) {
        const ks_plugin_desc *d;
        int rc = lookup(c, plan, &set->enabled[j], p, &d);
        if (rc < 0)
            return rc;
        if (rc == 0)
            continue;
        char impl[256];
        implemented_by(d, impl, sizeof(impl));
        return ks__cfg_fail(&c->L, KS_EINVAL,
                            "profiles[%zu].plugins.%s: plugin \"%s\" does not extend %s plugin "
                            "(it implements: %s; kubesched does not run pod-group scheduling)",
                            c->prof, ks__point_field(p), d->name, ks__point_name(p), impl);
    }
    return 0;
}

static int plan_profile(plan_ctx *c, ks_profile_plan *plan)
{
    const ks_profile_config *prof = plan->profile;
    const char *name = prof->scheduler_name ? prof->scheduler_name : "";
    int rc;
    for (int i = 0; i < KS_PT_COUNT; i++)
        if ((rc = build_point(c, plan, upstream_order[i])) < 0)
            return rc;
    for (int p = KS_PT_PLACEMENT_GENERATE; p < KS_PT_NSETS; p++)
        if ((rc = check_pod_group_point(c, plan, (ks_point)p)) < 0)
            return rc;
    for (int i = 0; i < KS_PT_COUNT; i++)
        if ((rc = expand_point(c, plan, upstream_order[i])) < 0)
            return rc;
    if (plan->npoint[KS_PT_QUEUE_SORT] != 1)
        return ks__cfg_fail(&c->L, KS_EINVAL,
                            "profiles[%zu].plugins: only one queue sort plugin required for "
                            "profile with scheduler name \"%s\", but got %zu (enable exactly one "
                            "QueueSort plugin, such as PrioritySort)",
                            c->prof, name, plan->npoint[KS_PT_QUEUE_SORT]);
    if (plan->npoint[KS_PT_BIND] == 0)
        return ks__cfg_fail(&c->L, KS_EINVAL,
                            "profiles[%zu].plugins: at least one bind plugin is needed for "
                            "profile with scheduler name \"%s\" (such as DefaultBinder)",
                            c->prof, name);
    if ((rc = score_weights(c, plan)) < 0)
        return rc;
    return build_instances(c, plan);
}

void ks__config_plans_free(ks_profile_plan *plans, size_t n)
{
    if (!plans)
        return;
    for (size_t i = 0; i < n; i++) {
        for (int p = 0; p < KS_PT_COUNT; p++)
            free(plans[i].point[p]);
        free(plans[i].instances);
        free(plans[i].unavailable);
    }
    free(plans);
}

int ks__config_plan(const ks_config *cfg, const struct ks_registry *reg, ks_profile_plan **plans,
                    char *err, size_t errlen)
{
    plan_ctx c;
    ks_profile_plan *out;
    int rc = 0;
    memset(&c, 0, sizeof(c));
    c.L.err = err;
    c.L.errlen = errlen;
    c.L.file = cfg && cfg->path ? cfg->path : "<config>";
    c.cfg = cfg;
    c.reg = reg;
    *plans = NULL;
    if (err && errlen)
        err[0] = '\0';
    if (!cfg || !reg || cfg->nprofiles == 0)
        return ks__cfg_fail(&c.L, KS_EINVAL, "no configuration or registry to plan");
    out = calloc(cfg->nprofiles, sizeof(*out));
    if (!out)
        return oom(&c);
    for (size_t i = 0; i < cfg->nprofiles && rc == 0; i++) {
        c.prof = i;
        out[i].profile = &cfg->profiles[i];
        rc = plan_profile(&c, &out[i]);
    }
    /* profile.NewMap: one queue sort (and args) for all profiles, the queue being shared. */
    for (size_t i = 1; i < cfg->nprofiles && rc == 0; i++) {
        const char *first = out[0].point[KS_PT_QUEUE_SORT][0].name;
        const char *mine = out[i].point[KS_PT_QUEUE_SORT][0].name;
        if (strcmp(first, mine) != 0)
            rc = ks__cfg_fail(&c.L, KS_EINVAL,
                              "profiles[%zu]: different queue sort plugins for profile \"%s\": "
                              "\"%s\", first: \"%s\" (all profiles share one scheduling queue)",
                              i, cfg->profiles[i].scheduler_name, mine, first);
        else {
            const cJSON *a = args_of(&cfg->profiles[0], first);
            const cJSON *b = args_of(&cfg->profiles[i], mine);
            if ((a || b) && !(a && b && cJSON_Compare(a, b, 1)))
                rc = ks__cfg_fail(&c.L, KS_EINVAL,
                                  "profiles[%zu]: different queue sort plugin args for profile "
                                  "\"%s\" (all profiles share one scheduling queue)",
                                  i, cfg->profiles[i].scheduler_name);
        }
    }
    if (rc < 0) {
        ks__config_plans_free(out, cfg->nprofiles);
        return rc;
    }
    *plans = out;
    return 0;
}
