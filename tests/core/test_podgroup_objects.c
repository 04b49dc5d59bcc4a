/*
 * Upstream's gang scheduling below the plugin (GenericWorkload): the scheduling.k8s.io/v1beta1
 * PodGroup as kubesched reads it (core/api/podgroup_objects.c, both modes), the store's members
 * and their states (upstream's cache podGroupStates: addPod, updatePod, assumePod, forgetPod,
 * deletePod), spec.schedulingGroup on the pod, and the default profile's GangScheduling,
 * appended by applyFeatureGates only with the gate on (core/config/config_defaults.c).
 */
#include <criterion/criterion.h>

#include <string.h>

#include "api/podgroup_objects.h"
#include "config/config.h"
#include "config/registry.h"
#include "harness.h"

TestSuite(podgroup_objects, .init = th_init, .fini = th_fini);

static ks_pod_group *parse(const char *text, int checked, char *err)
{
    cJSON *o = th_json(text);
    ks_pod_group *pg = NULL;
    int rc = checked ? ks__podgroup_from_json_checked(o, &pg, err, 512)
                     : ks__podgroup_from_json(o, &pg, err, 512);
    cJSON_Delete(o);
    cr_assert_eq(rc == 0, pg != NULL);
    return pg;
}

#define PG(spec)                                                                                   \
    "{'apiVersion':'scheduling.k8s.io/v1beta1','kind':'PodGroup','metadata':{'namespace':'ns1',"   \
    "'name':'pg1','uid':'u1','resourceVersion':'7','creationTimestamp':'2026-12-01T10:00:00Z'},"   \
    "'spec':" spec "}"

Test(podgroup_objects, a_gang_pod_group_is_read_once_into_its_view)
{
    char err[512] = "";
    ks_pod_group *pg = parse(PG("{'schedulingPolicy':{'gang':{'minCount':4}},'priority':7,"
                                "'workloadRef':{'workloadName':'w','templateName':'t'}}"),
                             1, err);
    cr_assert_not_null(pg, "%s", err);
    const ks_pod_group_view *v = &pg->v;
    cr_expect_eq(v->size, sizeof(*v));
    cr_expect_str_eq(ks__sym_str(v->ns), "ns1");
    cr_expect_str_eq(ks__sym_str(v->name), "pg1");
    cr_expect_str_eq(pg->key, "ns1/pg1");
    cr_expect_str_eq(v->uid, "u1");
    cr_expect_str_eq(v->resource_version, "7");
    cr_expect_eq(v->policy, KS_PG_POLICY_GANG);
    cr_expect_eq(v->min_count, 4);
    cr_expect(v->has_priority && v->priority == 7);
    cr_expect_str_eq(ks__sym_str(v->workload_name), "w");
    cr_expect_str_eq(ks__sym_str(v->template_name), "t");
    cr_expect_eq(v->parent_composite_pod_group, KS_SYM_ABSENT);
    cr_expect_eq(v->creation_unix_ns, 1796119200LL * 1000000000LL);
    cr_expect(strstr(v->json, "\"minCount\":4"));
    ks_pod_group *r = ks__podgroup_ref(pg);
    ks__podgroup_unref(pg);
    cr_expect_eq(r->v.min_count, 4, "still held");
    ks__podgroup_unref(r);
}

Test(podgroup_objects, lenient_reading_keeps_what_the_api_server_stored)
{
    char err[512] = "";
    /* lenient: no policy reads as none; both set reads as gang (the plugin's order) */
    ks_pod_group *pg = parse(PG("{}"), 0, err);
    cr_assert_not_null(pg, "%s", err);
    cr_expect_eq(pg->v.policy, KS_PG_POLICY_NONE);
    ks__podgroup_unref(pg);
    pg = parse(PG("{'schedulingPolicy':{'basic':{},'gang':{'minCount':2}}}"), 0, err);
    cr_assert_not_null(pg, "%s", err);
    cr_expect_eq(pg->v.policy, KS_PG_POLICY_GANG);
    cr_expect_eq(pg->v.min_count, 2);
    ks__podgroup_unref(pg);
    /* a wrong type is refused in both modes */
    cr_expect_null(parse(PG("{'schedulingPolicy':{'gang':{'minCount':'4'}}}"), 0, err));
    cr_expect_str_eq(err, "spec.schedulingPolicy.gang.minCount: expected an int32");
    cr_expect_null(parse("{'apiVersion':'scheduling.k8s.io/v1alpha2','kind':'PodGroup'}", 0, err));
    cr_expect_null(parse(
        "{'apiVersion':'scheduling.k8s.io/v1beta1','kind':'PodGroup','metadata':{},'spec':{}}", 0,
        err));
    cr_expect_str_eq(err, "metadata.name: Required value: name or generateName is required");
}

Test(podgroup_objects, checked_reading_refuses_what_the_api_server_refuses)
{
    char err[512] = "";
    cr_expect_null(parse(PG("{'schedulingPolicy':{'gang':{}}}"), 1, err));
    cr_expect_str_eq(err, "spec.schedulingPolicy.gang.minCount: Required value");
    cr_expect_null(
        parse(PG("{'parentCompositePodGroupName':'c','schedulingPolicy':{'basic':{}}}"), 1, err));
    cr_expect_str_eq(err, "spec.workloadRef: Required value: must be set when "
                          "parentCompositePodGroupName is set");
}

/* The members: upstream podGroupStateData's transitions. */
typedef struct tally {
    int all, unscheduled, assumed, assigned;
    char node_of_assumed[64];
} tally;

static void count(void *ctx, const ks_pod *pod, ks_pod_group_member_state st)
{
    tally *t = ctx;
    t->all++;
    t->unscheduled += st == KS_PG_MEMBER_UNSCHEDULED;
    t->assigned += st == KS_PG_MEMBER_ASSIGNED;
    if (st == KS_PG_MEMBER_ASSUMED) {
        t->assumed++;
        snprintf(t->node_of_assumed, sizeof(t->node_of_assumed), "%s", ks__sym_str(pod->node_name));
    }
}

static tally members(ks_podgroup_store *st, const char *ns, const char *name)
{
    tally t = {0};
    ks__podgroup_members_each(st, ks__intern(ns), ks__intern(name), count, &t);
    /* the counts without the walk (pod_group_member_counts) agree with it at every step */
    size_t all = 99, scheduled = 99;
    ks__podgroup_member_counts(st, ks__intern(ns), ks__intern(name), &all, &scheduled);
    cr_expect_eq(all, (size_t)t.all, "%s/%s: %zu members counted, %d visited", ns, name, all,
                 t.all);
    cr_expect_eq(scheduled, (size_t)(t.assumed + t.assigned),
                 "%s/%s: %zu scheduled counted, %d assumed + %d assigned visited", ns, name,
                 scheduled, t.assumed, t.assigned);
    return t;
}

Test(podgroup_objects, members_move_between_unscheduled_assumed_and_assigned)
{
    ks_podgroup_store *st = ks__podgroup_store_new();
    ks_pod *p1 = th_pod("{'metadata':{'namespace':'ns1','name':'p1','uid':'p1'},"
                        "'spec':{'schedulingGroup':{'podGroupName':'pg1'}}}");
    ks_pod *p2 = th_pod("{'metadata':{'namespace':'ns1','name':'p2','uid':'p2'},"
                        "'spec':{'schedulingGroup':{'podGroupName':'pg1'}}}");
    ks_pod *other = th_pod("{'metadata':{'namespace':'ns2','name':'p3','uid':'p3'},"
                           "'spec':{'schedulingGroup':{'podGroupName':'pg1'}}}");
    ks_pod *plain = th_pod("{'metadata':{'namespace':'ns1','name':'p4','uid':'p4'},'spec':{}}");
    cr_expect_str_eq(ks__sym_str(p1->scheduling_group), "pg1");
    cr_expect_eq(plain->scheduling_group, KS_SYM_ABSENT);
    ks__podgroup_member_add(st, p1);
    ks__podgroup_member_add(st, p2);
    ks__podgroup_member_add(st, other);
    ks__podgroup_member_add(st, plain); /* no group: ignored */
    tally t = members(st, "ns1", "pg1");
    cr_expect_eq(t.all, 2);
    cr_expect_eq(t.unscheduled, 2);
    /* assume: seen as its assumed copy, on its node */
    ks_pod *a1 = ks__pod_with_node(p1, ks__intern("n1"));
    ks__podgroup_member_assume(st, a1);
    t = members(st, "ns1", "pg1");
    cr_expect_eq(t.assumed, 1);
    cr_expect_str_eq(t.node_of_assumed, "n1");
    /* forget: unscheduled again */
    ks__podgroup_member_forget(st, a1);
    t = members(st, "ns1", "pg1");
    cr_expect_eq(t.unscheduled, 2);
    /* assumed, then bound (the informer's update with spec.nodeName): assigned */
    ks__podgroup_member_assume(st, a1);
    ks_pod *b1 = ks__pod_with_node(p1, ks__intern("n1"));
    ks__podgroup_member_update(st, p1, b1);
    t = members(st, "ns1", "pg1");
    cr_expect_eq(t.assigned, 1);
    cr_expect_eq(t.assumed, 0);
    ks__podgroup_member_forget(st, a1); /* a late forget leaves a bound pod assigned */
    cr_expect_eq(members(st, "ns1", "pg1").assigned, 1);
    /* delete: gone; the last member's delete drops the group's entry */
    ks__podgroup_member_remove(st, b1);
    ks__podgroup_member_remove(st, p2);
    cr_expect_eq(members(st, "ns1", "pg1").all, 0);
    cr_expect_eq(members(st, "ns2", "pg1").all, 1);
    ks__podgroup_store_free(st);
    ks__pod_unref(a1); /* th_pod's pods are the harness's */
    ks__pod_unref(b1);
}

Test(podgroup_objects, store_apply_replaces_and_removes)
{
    ks_podgroup_store *st = ks__podgroup_store_new();
    char err[512] = "";
    ks_pod_group *old_pg = NULL, *new_pg = NULL;
    cJSON *o = th_json(PG("{'schedulingPolicy':{'gang':{'minCount':4}}}"));
    cr_assert_eq(ks__podgroup_store_apply(st, o, 0, 1, &old_pg, &new_pg, err, sizeof(err)), 0, "%s",
                 err);
    cr_expect_null(old_pg);
    cr_expect_eq(new_pg->v.min_count, 4);
    ks__podgroup_unref(new_pg);
    cJSON_Delete(o);
    o = th_json(PG("{'schedulingPolicy':{'gang':{'minCount':2}}}"));
    cr_assert_eq(ks__podgroup_store_apply(st, o, 0, 1, &old_pg, &new_pg, err, sizeof(err)), 0);
    cr_expect_eq(old_pg->v.min_count, 4);
    cr_expect_eq(new_pg->v.min_count, 2);
    ks__podgroup_unref(old_pg);
    ks__podgroup_unref(new_pg);
    ks_pod_group *got = ks__podgroup_store_get(st, ks__intern("ns1"), ks__intern("pg1"));
    cr_expect_eq(got->v.min_count, 2);
    ks__podgroup_unref(got);
    cr_expect_eq(ks__podgroup_store_count(st), 1);
    cr_assert_eq(ks__podgroup_store_apply(st, o, 1, 1, &old_pg, &new_pg, err, sizeof(err)), 0);
    cr_expect_eq(old_pg->v.min_count, 2);
    cr_expect_null(new_pg);
    ks__podgroup_unref(old_pg);
    cr_expect_null(ks__podgroup_store_get(st, ks__intern("ns1"), ks__intern("pg1")));
    cJSON_Delete(o);
    ks__podgroup_store_free(st);
}

/* upstream applyFeatureGates: GangScheduling appended to the default plugins only with
 * GenericWorkload on; then it is planned at PreEnqueue (after SchedulingGates and DynamicResources)
 * and Permit. */
Test(podgroup_objects, gang_scheduling_is_a_default_plugin_only_with_the_gate)
{
    char err[1024];
    ks_registry *reg = th_registry_new();
    ks_config *c = NULL;
    cr_assert_eq(ks__config_default(reg, &c, err, sizeof(err)), 0, "%s", err);
    const ks_plugin_set *mp = &c->profiles[0].plugins[KS_PT_MULTI];
    for (size_t i = 0; i < mp->nenabled; i++)
        cr_expect_str_neq(mp->enabled[i].name, "GangScheduling");
    ks__config_free(c);

    ks__cfg_set_generic_workload(1);
    cr_assert_eq(ks__config_default(reg, &c, err, sizeof(err)), 0, "%s", err);
    mp = &c->profiles[0].plugins[KS_PT_MULTI];
    cr_expect_str_eq(mp->enabled[mp->nenabled - 1].name, "GangScheduling");
    cr_expect_str_eq(mp->enabled[mp->nenabled - 2].name, "NodeDeclaredFeatures");
    cr_expect_eq(mp->enabled[mp->nenabled - 1].weight, 0);
    ks_profile_plan *plans = NULL;
    cr_assert_eq(ks__config_plan(c, reg, &plans, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(plans[0].npoint[KS_PT_PRE_ENQUEUE], 3);
    cr_expect_str_eq(plans[0].point[KS_PT_PRE_ENQUEUE][0].name, "SchedulingGates");
    cr_expect_str_eq(plans[0].point[KS_PT_PRE_ENQUEUE][1].name, "DynamicResources");
    cr_expect_str_eq(plans[0].point[KS_PT_PRE_ENQUEUE][2].name, "GangScheduling");
    cr_expect_eq(plans[0].npoint[KS_PT_PERMIT], 1);
    cr_expect_str_eq(plans[0].point[KS_PT_PERMIT][0].name, "GangScheduling");
    ks__config_plans_free(plans, c->nprofiles);
    ks__config_free(c);
    ks__cfg_set_generic_workload(0);
    ks__registry_free(reg);
}
