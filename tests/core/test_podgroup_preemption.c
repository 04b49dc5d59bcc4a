/*
 * Workload-aware preemption's model (core/sched/podgroup_preemption.c): upstream v1.37.2's
 * MoreImportantVictim order (priority, the PodGroup type before the Pod type, the larger, then the
 * older), the sort that keeps snapshot order on ties, and the PodDisruptionBudget split
 * of units (a unit violates when any of its pods takes a matching budget below zero). The
 * end-to-end cases are in tests/sim/test_gang_preemption.c.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api/intern.h"
#include "api/objects.h"
#include "harness.h"
#include "sched/host_api.h"
#include "sched/scheduler_int.h"

static void setup(void) { ks__host_init(); }

TestSuite(podgroup_preemption, .init = setup);

static ks__pg_victim unit(int32_t prio, int group, size_t npods, int64_t start, size_t order)
{
    return (ks__pg_victim){NULL, npods, prio, group, start, order};
}

Test(podgroup_preemption, higher_priority_is_more_important)
{
    ks__pg_victim a = unit(100, 0, 1, 5, 0), b = unit(10, 1, 3, 1, 1);
    cr_expect(ks__pg_more_important_victim(&a, &b));
    cr_expect(!ks__pg_more_important_victim(&b, &a));
}

Test(podgroup_preemption, a_pod_group_is_more_important_than_a_pod_of_its_priority)
{
    ks__pg_victim g = unit(10, 1, 1, 9, 0), p = unit(10, 0, 1, 1, 1);
    cr_expect(ks__pg_more_important_victim(&g, &p));
    cr_expect(!ks__pg_more_important_victim(&p, &g));
}

Test(podgroup_preemption, the_older_pod_is_more_important)
{
    ks__pg_victim old = unit(10, 0, 1, 1, 1), young = unit(10, 0, 1, 2, 0);
    cr_expect(ks__pg_more_important_victim(&old, &young));
    cr_expect(!ks__pg_more_important_victim(&young, &old));
    /* equal: neither (a strict order, as time.Before) */
    ks__pg_victim same = unit(10, 0, 1, 1, 2);
    cr_expect(!ks__pg_more_important_victim(&old, &same));
}

Test(podgroup_preemption, the_larger_then_the_older_group_is_more_important)
{
    ks__pg_victim big = unit(10, 1, 3, 9, 0), small = unit(10, 1, 2, 1, 1);
    cr_expect(ks__pg_more_important_victim(&big, &small));
    cr_expect(!ks__pg_more_important_victim(&small, &big));
    ks__pg_victim old = unit(10, 1, 2, 1, 2), young = unit(10, 1, 2, 5, 3);
    cr_expect(ks__pg_more_important_victim(&old, &young));
}

Test(podgroup_preemption, the_sort_puts_the_most_important_first_and_keeps_ties_in_order)
{
    ks__pg_victim v[] = {unit(10, 0, 1, INT64_MAX, 0), unit(10, 0, 1, INT64_MAX, 1),
                         unit(50, 0, 1, INT64_MAX, 2), unit(10, 1, 2, INT64_MAX, 3),
                         unit(10, 0, 1, INT64_MAX, 4)};
    ks__pg_victims_sort(v, 5);
    size_t want[] = {2, 3, 0, 1, 4};
    for (size_t i = 0; i < 5; i++)
        cr_expect_eq(v[i].order, want[i], "position %zu: %zu", i, v[i].order);
}

static ks_pod *mkpod(const char *name, const char *labels)
{
    char text[512], err[256];
    snprintf(text, sizeof(text),
             "{'metadata':{'name':'%s','namespace':'ns','uid':'%s','labels':{%s}},"
             "'spec':{'nodeName':'n1','containers':[{'name':'c'}]}}",
             name, name, labels);
    ks_pod *p = NULL;
    cJSON *obj = th_json(text);
    cr_assert_eq(ks__pod_from_json(obj, &p, err, sizeof(err)), 0, "%s", err);
    cJSON_Delete(obj);
    return p;
}

Test(podgroup_preemption, a_unit_violates_a_budget_when_any_of_its_pods_does)
{
    ks_pod *pods[] = {mkpod("g1", "'app':'foo'"), mkpod("g2", ""), mkpod("single", "")};
    ks__pg_victim v[] = {{&pods[0], 2, 10, 1, INT64_MAX, 0}, {&pods[2], 1, 10, 0, INT64_MAX, 2}};
    ks_label match = {ks__intern("app"), ks__intern("foo")};
    ks_pdb pdb = {ks__intern("ns"), ks__intern("foo"), {1, 1, &match, 0, NULL}, 0, 0, NULL};
    uint8_t violating[2];
    cr_assert_eq(ks__pg_victims_pdb(v, 2, &pdb, 1, violating), 0);
    cr_expect_eq(violating[0], 1);
    cr_expect_eq(violating[1], 0);
    /* one disruption allowed: no violation */
    pdb.disruptions_allowed = 1;
    ks__pg_victims_pdb(v, 2, &pdb, 1, violating);
    cr_expect_eq(violating[0], 0);
    /* a pod the budget already counts as disrupted does not count again */
    pdb.disruptions_allowed = 0;
    ks_sym disrupted = ks__intern("g1");
    pdb.ndisrupted = 1;
    pdb.disrupted = &disrupted;
    ks__pg_victims_pdb(v, 2, &pdb, 1, violating);
    cr_expect_eq(violating[0], 0);
    /* another namespace's budget never matches */
    pdb.ndisrupted = 0;
    pdb.ns = ks__intern("other");
    ks__pg_victims_pdb(v, 2, &pdb, 1, violating);
    cr_expect_eq(violating[0], 0);
    for (size_t i = 0; i < 3; i++)
        ks__pod_unref(pods[i]);
}

Test(podgroup_preemption, a_budget_without_selector_matches_nothing)
{
    ks_pod *pods[] = {mkpod("a", "'app':'foo'")};
    ks__pg_victim v[] = {{&pods[0], 1, 10, 0, INT64_MAX, 0}};
    ks_pdb pdb = {ks__intern("ns"), ks__intern("all"), {1, 0, NULL, 0, NULL}, 0, 0, NULL};
    uint8_t violating[1];
    ks__pg_victims_pdb(v, 1, &pdb, 1, violating);
    cr_expect_eq(violating[0], 0, "an empty selector");
    pdb.selector.present = 0;
    ks__pg_victims_pdb(v, 1, &pdb, 1, violating);
    cr_expect_eq(violating[0], 0, "a nil selector");
    ks__pod_unref(pods[0]);
}
