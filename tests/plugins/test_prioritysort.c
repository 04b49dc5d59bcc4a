/* PrioritySort: upstream queuesort/priority_sort_test.go (TestLess). */
#include <criterion/criterion.h>
#include <stdio.h>

#include "harness.h"

extern const ks_plugin_desc ks_plugin_priority_sort;

TestSuite(priority_sort, .init = th_init, .fini = th_fini);

static ks_pod *pod_with_priority(const char *name, int prio)
{
    char json[256];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'default','uid':'%s'},"
             "'spec':{'priority':%d,'containers':[{'name':'c'}]}}",
             name, name, prio);
    return th_pod(json);
}

Test(priority_sort, lower_priority_goes_after)
{
    th_plugin *p = th_plugin_new(&ks_plugin_priority_sort, NULL);
    ks_pod *low = pod_with_priority("p1", 10), *high = pod_with_priority("p2", 100);
    cr_assert_eq(th_less(p, low, 1000, high, 2000), 0);
}

Test(priority_sort, higher_priority_goes_first)
{
    th_plugin *p = th_plugin_new(&ks_plugin_priority_sort, NULL);
    ks_pod *high = pod_with_priority("p1", 100), *low = pod_with_priority("p2", 10);
    cr_assert_neq(th_less(p, high, 2000, low, 1000), 0);
}

Test(priority_sort, equal_priority_earlier_timestamp_goes_first)
{
    th_plugin *p = th_plugin_new(&ks_plugin_priority_sort, NULL);
    ks_pod *a = pod_with_priority("p1", 100), *b = pod_with_priority("p2", 100);
    cr_assert_neq(th_less(p, a, 1000, b, 2000), 0);
}

Test(priority_sort, equal_priority_later_timestamp_goes_after)
{
    th_plugin *p = th_plugin_new(&ks_plugin_priority_sort, NULL);
    ks_pod *a = pod_with_priority("p1", 100), *b = pod_with_priority("p2", 100);
    cr_assert_eq(th_less(p, a, 2000, b, 1000), 0);
}

Test(priority_sort, equal_priority_and_timestamp_is_not_less)
{
    th_plugin *p = th_plugin_new(&ks_plugin_priority_sort, NULL);
    ks_pod *a = pod_with_priority("p1", 5), *b = pod_with_priority("p2", 5);
    cr_assert_eq(th_less(p, a, 1000, b, 1000), 0);
    cr_assert_eq(th_less(p, b, 1000, a, 1000), 0);
}

Test(priority_sort, missing_priority_counts_as_zero)
{
    th_plugin *p = th_plugin_new(&ks_plugin_priority_sort, NULL);
    ks_pod *none = th_pod("{'metadata':{'name':'p0','namespace':'default','uid':'p0'},"
                          "'spec':{'containers':[{'name':'c'}]}}");
    ks_pod *neg = pod_with_priority("pn", -1);
    cr_assert_neq(th_less(p, none, 2000, neg, 1000), 0);
}

Test(priority_sort, implements_only_queue_sort)
{
    cr_assert_str_eq(ks_plugin_priority_sort.name, "PrioritySort");
    cr_assert_not_null(ks_plugin_priority_sort.less);
    cr_assert_null(ks_plugin_priority_sort.filter);
    cr_assert_null(ks_plugin_priority_sort.score);
}
