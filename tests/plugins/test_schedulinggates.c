/* SchedulingGates: upstream schedulinggates/scheduling_gates_test.go (TestPreEnqueue) plus the
 * message format for odd gate lists and the registered events. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

extern const ks_plugin_desc ks_plugin_scheduling_gates;

TestSuite(scheduling_gates, .init = th_init, .fini = th_fini);

static ks_code pre_enqueue(const char *gates, char *r, size_t len)
{
    char json[4096];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p','namespace':'default','uid':'u1'},"
             "'spec':{'containers':[{'name':'c','image':'pause'}]%s%s%s}}",
             gates ? ",'schedulingGates':[" : "", gates ? gates : "", gates ? "]" : "");
    th_plugin *p = th_plugin_new(&ks_plugin_scheduling_gates, NULL);
    return th_pre_enqueue(p, th_pod(json), r, len);
}

Test(scheduling_gates, admits_pod_without_gates)
{
    char r[256];
    cr_assert_eq(pre_enqueue(NULL, r, sizeof(r)), KS_SUCCESS);
    cr_assert_str_eq(r, "");
}

Test(scheduling_gates, admits_pod_with_empty_gate_list)
{
    char r[256];
    cr_assert_eq(pre_enqueue("", r, sizeof(r)), KS_SUCCESS);
}

Test(scheduling_gates, parks_gated_pod_naming_gates_in_go_slice_format)
{
    char r[256];
    cr_assert_eq(pre_enqueue("{'name':'foo'},{'name':'bar'}", r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "waiting for scheduling gates: [foo bar]");
}

Test(scheduling_gates, single_gate_has_no_separator)
{
    char r[256];
    cr_assert_eq(pre_enqueue("{'name':'example.com/quota'}", r, sizeof(r)),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(r, "waiting for scheduling gates: [example.com/quota]");
}

Test(scheduling_gates, many_long_gates_are_all_named)
{
    char gates[3000] = "", want[3200] = "waiting for scheduling gates: [", r[3200];
    for (int i = 0; i < 20; i++) {
        char g[128];
        snprintf(g, sizeof(g), "%s{'name':'example.com/a-rather-long-gate-name-%02d'}",
                 i ? "," : "", i);
        strcat(gates, g);
        snprintf(g, sizeof(g), "%sexample.com/a-rather-long-gate-name-%02d", i ? " " : "", i);
        strcat(want, g);
    }
    strcat(want, "]");
    cr_assert_eq(pre_enqueue(gates, r, sizeof(r)), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    /* The status keeps what fits in its buffer, the start always, and marks the cut. */
    const char *mark = "\xe2\x80\xa6(truncated)";
    size_t kept = strlen(r) - strlen(mark);
    cr_assert_str_eq(r + kept, mark, "got %s", r);
    cr_assert(strncmp(r, want, kept) == 0, "got %s", r);
    cr_assert_gt(strlen(r), 200);
}

Test(scheduling_gates, has_only_pre_enqueue)
{
    cr_assert_null(ks_plugin_scheduling_gates.filter);
    cr_assert_null(ks_plugin_scheduling_gates.pre_filter);
    cr_assert_null(ks_plugin_scheduling_gates.score);
    cr_assert_str_eq(ks_plugin_scheduling_gates.name, "SchedulingGates");
}
