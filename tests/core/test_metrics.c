/*
 * The metrics registry (core/util/metrics.c): exposition text, number formatting, bucket bounds,
 * label escaping, concurrent updates, bad definitions.
 *
 * The expected texts, float strings and bucket bits below were produced by the upstream libraries
 * themselves (client_golang v1.22 via expfmt, component-base and k8s.io/kubernetes v1.34.12's
 * pkg/scheduler/metrics, Go's strconv.FormatFloat) with a throwaway Go program that performs the
 * same updates as these tests; to regenerate, redo the updates of each test in Go and print
 * expfmt.NewEncoder(os.Stdout, expfmt.NewFormat(expfmt.TypeTextPlain)).Encode(mf) for each family
 * that Gather returns.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/metrics.h"
#include "sched/sched_families.h" /* the scheduler's families moved to core/sched */

/* Compares two texts and, on a mismatch, names the first differing line of each. */
static void expect_text(const char *got, const char *want)
{
    if (strcmp(got, want) == 0)
        return;
    size_t line = 1;
    const char *g = got, *w = want, *gl = got, *wl = want;
    while (*g && *g == *w) {
        if (*g == '\n') {
            line++;
            gl = g + 1;
            wl = w + 1;
        }
        g++;
        w++;
    }
    int gn = (int)strcspn(gl, "\n"), wn = (int)strcspn(wl, "\n");
    cr_assert_fail("exposition differs at line %zu:\n  got:  %.*s\n  want: %.*s", line, gn, gl, wn,
                   wl);
}

static char *render(ks_metrics *r)
{
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(ks__metrics_render(r, &text, &len), 0);
    cr_assert_eq(strlen(text), len);
    return text;
}

static ks_metric_family *reg(ks_metrics *r, ks_metric_type type, const char *name, const char *help,
                             const char *const *labels, size_t nlabels, const double *buckets,
                             size_t nbuckets)
{
    ks_metric_opts o = {type, name, help, KS_STABILITY_NONE, labels, nlabels, buckets, nbuckets};
    ks_metric_family *f = NULL;
    cr_assert_eq(ks__metrics_register(r, &o, &f), 0, "register %s", name);
    cr_assert_not_null(f);
    return f;
}

static const char GOLDEN_TYPES[] =
    "# HELP test_latency_seconds Latency.\n"
    "# TYPE test_latency_seconds histogram\n"
    "test_latency_seconds_bucket{le=\"0.1\"} 2\n"
    "test_latency_seconds_bucket{le=\"0.5\"} 2\n"
    "test_latency_seconds_bucket{le=\"1\"} 3\n"
    "test_latency_seconds_bucket{le=\"+Inf\"} 4\n"
    "test_latency_seconds_sum 3.85\n"
    "test_latency_seconds_count 4\n"
    "# HELP test_plain_total Plain.\n"
    "# TYPE test_plain_total counter\n"
    "test_plain_total 1e+06\n"
    "# HELP test_requests_total Requests served.\\nSecond line with a backslash \\\\ here.\n"
    "# TYPE test_requests_total counter\n"
    "test_requests_total{code=\"200\",method=\"GET\"} 2\n"
    "test_requests_total{code=\"500\",method=\"POST\"} 1.5\n"
    "test_requests_total{code=\"a\\\"b\\\\c\\nd\",method=\"GET\"} 1\n"
    "# HELP test_size_bytes Sizes.\n"
    "# TYPE test_size_bytes histogram\n"
    "test_size_bytes_bucket{kind=\"a\",le=\"1\"} 0\n"
    "test_size_bytes_bucket{kind=\"a\",le=\"2\"} 0\n"
    "test_size_bytes_bucket{kind=\"a\",le=\"4\"} 0\n"
    "test_size_bytes_bucket{kind=\"a\",le=\"+Inf\"} 1\n"
    "test_size_bytes_sum{kind=\"a\"} 100\n"
    "test_size_bytes_count{kind=\"a\"} 1\n"
    "test_size_bytes_bucket{kind=\"b\",le=\"1\"} 0\n"
    "test_size_bytes_bucket{kind=\"b\",le=\"2\"} 0\n"
    "test_size_bytes_bucket{kind=\"b\",le=\"4\"} 1\n"
    "test_size_bytes_bucket{kind=\"b\",le=\"+Inf\"} 1\n"
    "test_size_bytes_sum{kind=\"b\"} 4\n"
    "test_size_bytes_count{kind=\"b\"} 1\n"
    "# HELP test_temperature_celsius Temperature \"quoted\".\n"
    "# TYPE test_temperature_celsius gauge\n"
    "test_temperature_celsius{room=\"attic\"} -3\n"
    "test_temperature_celsius{room=\"cellar\"} 0.30000000000000004\n"
    "test_temperature_celsius{room=\"five\"} -1\n"
    "test_temperature_celsius{room=\"four\"} 1e-05\n"
    "test_temperature_celsius{room=\"inf\"} +Inf\n"
    "test_temperature_celsius{room=\"kitchen\"} 21.5\n"
    "test_temperature_celsius{room=\"nan\"} NaN\n"
    "test_temperature_celsius{room=\"neginf\"} -Inf\n"
    "test_temperature_celsius{room=\"one\"} 123456\n"
    "test_temperature_celsius{room=\"three\"} 0.0001\n"
    "test_temperature_celsius{room=\"tiny\"} 5e-324\n"
    "test_temperature_celsius{room=\"two\"} 1.234567e+06\n"
    "test_temperature_celsius{room=\"vault\"} 1e+21\n"
    "test_temperature_celsius{room=\"zero\"} 0\n";

static const char GOLDEN_SCHED_FRESH[] =
    "# HELP scheduler_pod_scheduled_after_flush_total [ALPHA] Number of pods that were "
    "successfully scheduled after being flushed from unschedulableEntities due to timeout. This "
    "metric helps detect potential queueing hint misconfigurations or event handling issues.\n"
    "# TYPE scheduler_pod_scheduled_after_flush_total counter\n"
    "scheduler_pod_scheduled_after_flush_total 0\n"
    "# HELP scheduler_pod_scheduling_attempts [STABLE] Number of attempts to successfully schedule "
    "a pod.\n"
    "# TYPE scheduler_pod_scheduling_attempts histogram\n"
    "scheduler_pod_scheduling_attempts_bucket{le=\"1\"} 0\n"
    "scheduler_pod_scheduling_attempts_bucket{le=\"2\"} 0\n"
    "scheduler_pod_scheduling_attempts_bucket{le=\"4\"} 0\n"
    "scheduler_pod_scheduling_attempts_bucket{le=\"8\"} 0\n"
    "scheduler_pod_scheduling_attempts_bucket{le=\"16\"} 0\n"
    "scheduler_pod_scheduling_attempts_bucket{le=\"+Inf\"} 0\n"
    "scheduler_pod_scheduling_attempts_sum 0\n"
    "scheduler_pod_scheduling_attempts_count 0\n"
    "# HELP scheduler_preemption_attempts_total [STABLE] Total preemption attempts in the cluster "
    "till now\n"
    "# TYPE scheduler_preemption_attempts_total counter\n"
    "scheduler_preemption_attempts_total 0\n"
    "# HELP scheduler_preemption_victims [STABLE] Number of selected preemption victims for "
    "preemption initiated by a single pod\n"
    "# TYPE scheduler_preemption_victims histogram\n"
    "scheduler_preemption_victims_bucket{le=\"1\"} 0\n"
    "scheduler_preemption_victims_bucket{le=\"2\"} 0\n"
    "scheduler_preemption_victims_bucket{le=\"4\"} 0\n"
    "scheduler_preemption_victims_bucket{le=\"8\"} 0\n"
    "scheduler_preemption_victims_bucket{le=\"16\"} 0\n"
    "scheduler_preemption_victims_bucket{le=\"32\"} 0\n"
    "scheduler_preemption_victims_bucket{le=\"64\"} 0\n"
    "scheduler_preemption_victims_bucket{le=\"+Inf\"} 0\n"
    "scheduler_preemption_victims_sum 0\n"
    "scheduler_preemption_victims_count 0\n"
    "# HELP scheduler_scheduling_algorithm_duration_seconds [BETA] Scheduling algorithm latency "
    "in seconds\n"
    "# TYPE scheduler_scheduling_algorithm_duration_seconds histogram\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.001\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.002\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.004\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.008\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.016\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.032\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.064\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.128\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.256\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.512\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"1.024\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"2.048\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"4.096\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"8.192\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"16.384\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"+Inf\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_sum 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_count 0\n";

static const char GOLDEN_SCHED[] =
    "# HELP scheduler_cache_size [ALPHA] Number of nodes, pods, and assumed (bound) pods in the "
    "scheduler cache.\n"
    "# TYPE scheduler_cache_size gauge\n"
    "scheduler_cache_size{type=\"assumed_pods\"} 0\n"
    "scheduler_cache_size{type=\"nodes\"} 3\n"
    "scheduler_cache_size{type=\"pods\"} 5\n"
    "# HELP scheduler_event_handling_duration_seconds [ALPHA] Event handling latency in seconds.\n"
    "# TYPE scheduler_event_handling_duration_seconds histogram\n"
    "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\",le=\"0.0001\"} 0\n"
    "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\",le=\"0.0002\"} 1\n"
    "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\",le=\"0.0004\"} 1\n"
    "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\",le=\"0.0008\"} 1\n"
    "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\",le=\"0.0016\"} 1\n"
    "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\",le=\"0.0032\"} 1\n"
    "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\",le=\"0.0064\"} 1\n"
    "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\",le=\"0.0128\"} 1\n"
    "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\",le=\"0.0256\"} 1\n"
    "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\",le=\"0.0512\"} 1\n"
    "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\",le=\"0.1024\"} 1\n"
    "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\",le=\"0.2048\"} 1\n"
    "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\",le=\"+Inf\"} 1\n"
    "scheduler_event_handling_duration_seconds_sum{event=\"NodeAdd\"} 0.0002\n"
    "scheduler_event_handling_duration_seconds_count{event=\"NodeAdd\"} 1\n"
    "# HELP scheduler_framework_extension_point_duration_seconds [STABLE] Latency for running all "
    "plugins of a specific extension point.\n"
    "# TYPE scheduler_framework_extension_point_duration_seconds histogram\n"
    "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
    "profile=\"default-scheduler\",status=\"Success\",le=\"0.0001\"} 0\n"
    "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
    "profile=\"default-scheduler\",status=\"Success\",le=\"0.0002\"} 0\n"
    "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
    "profile=\"default-scheduler\",status=\"Success\",le=\"0.0004\"} 1\n"
    "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
    "profile=\"default-scheduler\",status=\"Success\",le=\"0.0008\"} 1\n"
    "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
    "profile=\"default-scheduler\",status=\"Success\",le=\"0.0016\"} 1\n"
    "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
    "profile=\"default-scheduler\",status=\"Success\",le=\"0.0032\"} 1\n"
    "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
    "profile=\"default-scheduler\",status=\"Success\",le=\"0.0064\"} 1\n"
    "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
    "profile=\"default-scheduler\",status=\"Success\",le=\"0.0128\"} 1\n"
    "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
    "profile=\"default-scheduler\",status=\"Success\",le=\"0.0256\"} 1\n"
    "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
    "profile=\"default-scheduler\",status=\"Success\",le=\"0.0512\"} 1\n"
    "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
    "profile=\"default-scheduler\",status=\"Success\",le=\"0.1024\"} 1\n"
    "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
    "profile=\"default-scheduler\",status=\"Success\",le=\"0.2048\"} 1\n"
    "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
    "profile=\"default-scheduler\",status=\"Success\",le=\"+Inf\"} 1\n"
    "scheduler_framework_extension_point_duration_seconds_sum{extension_point=\"Filter\",profile="
    "\"default-scheduler\",status=\"Success\"} 0.00025\n"
    "scheduler_framework_extension_point_duration_seconds_count{extension_point=\"Filter\",profile="
    "\"default-scheduler\",status=\"Success\"} 1\n"
    "# HELP scheduler_goroutines [BETA] Number of running goroutines split by the work they do "
    "such as binding.\n"
    "# TYPE scheduler_goroutines gauge\n"
    "scheduler_goroutines{operation=\"binding\"} 1\n"
    "# HELP scheduler_pending_pods [STABLE] Number of pending pods, by the queue type. 'active' "
    "means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' "
    "means number of pods in unschedulableEntities that the scheduler attempted to schedule and "
    "failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to "
    "schedule because they are gated; 'incomplete' means number of pods in "
    "incompletePodGroupPods; 'pending' means number of pods in pendingPodGroupPods.\n"
    "# TYPE scheduler_pending_pods gauge\n"
    "scheduler_pending_pods{queue=\"active\"} 2\n"
    "scheduler_pending_pods{queue=\"backoff\"} 1\n"
    "scheduler_pending_pods{queue=\"gated\"} 0\n"
    "scheduler_pending_pods{queue=\"unschedulable\"} 0\n"
    "# HELP scheduler_permit_wait_duration_seconds [BETA] Duration of waiting on permit.\n"
    "# TYPE scheduler_permit_wait_duration_seconds histogram\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"0.001\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"0.002\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"0.004\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"0.008\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"0.016\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"0.032\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"0.064\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"0.128\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"0.256\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"0.512\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"1.024\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"2.048\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"4.096\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"8.192\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"16.384\"} 1\n"
    "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"+Inf\"} 1\n"
    "scheduler_permit_wait_duration_seconds_sum{result=\"Success\"} 0.001\n"
    "scheduler_permit_wait_duration_seconds_count{result=\"Success\"} 1\n"
    "# HELP scheduler_plugin_evaluation_total [BETA] Number of attempts to schedule pods by each "
    "plugin and the extension point (available only in PreFilter, Filter, PreScore, and Score).\n"
    "# TYPE scheduler_plugin_evaluation_total counter\n"
    "scheduler_plugin_evaluation_total{extension_point=\"Filter\",plugin=\"NodeResourcesFit\","
    "profile=\"default-scheduler\"} 1\n"
    "scheduler_plugin_evaluation_total{extension_point=\"Filter\",plugin="
    "\"we\\\"ird\\\\plug\\nin\",profile=\"default-scheduler\"} 1\n"
    "# HELP scheduler_plugin_execution_duration_seconds [BETA] Duration for running a plugin at a "
    "specific extension point.\n"
    "# TYPE scheduler_plugin_execution_duration_seconds histogram\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"1e-05\"} 0\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"1.5000000000000002e-05\"} 0\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"2.2500000000000005e-05\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"3.375000000000001e-05\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"5.062500000000001e-05\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"7.593750000000002e-05\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.00011390625000000003\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.00017085937500000006\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.0002562890625000001\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.00038443359375000017\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.0005766503906250003\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.0008649755859375004\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.0012974633789062506\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.0019461950683593758\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.0029192926025390638\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.004378938903808595\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.006568408355712893\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.009852612533569338\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.014778918800354007\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"0.02216837820053101\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\",le=\"+Inf\"} 1\n"
    "scheduler_plugin_execution_duration_seconds_sum{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\"} 2e-05\n"
    "scheduler_plugin_execution_duration_seconds_count{extension_point=\"Filter\",plugin="
    "\"NodeResourcesFit\",status=\"Success\"} 1\n"
    "# HELP scheduler_pod_scheduled_after_flush_total [ALPHA] Number of pods that were "
    "successfully scheduled after being flushed from unschedulableEntities due to timeout. This "
    "metric helps detect potential queueing hint misconfigurations or event handling issues.\n"
    "# TYPE scheduler_pod_scheduled_after_flush_total counter\n"
    "scheduler_pod_scheduled_after_flush_total 1\n"
    "# HELP scheduler_pod_scheduling_attempts [STABLE] Number of attempts to successfully schedule "
    "a pod.\n"
    "# TYPE scheduler_pod_scheduling_attempts histogram\n"
    "scheduler_pod_scheduling_attempts_bucket{le=\"1\"} 1\n"
    "scheduler_pod_scheduling_attempts_bucket{le=\"2\"} 1\n"
    "scheduler_pod_scheduling_attempts_bucket{le=\"4\"} 1\n"
    "scheduler_pod_scheduling_attempts_bucket{le=\"8\"} 1\n"
    "scheduler_pod_scheduling_attempts_bucket{le=\"16\"} 1\n"
    "scheduler_pod_scheduling_attempts_bucket{le=\"+Inf\"} 1\n"
    "scheduler_pod_scheduling_attempts_sum 1\n"
    "scheduler_pod_scheduling_attempts_count 1\n"
    "# HELP scheduler_pod_scheduling_sli_duration_seconds [BETA] E2e latency for a pod being "
    "scheduled, from the time the pod enters the scheduling queue and might involve multiple "
    "scheduling attempts.\n"
    "# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"0.01\"} 0\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"0.02\"} 0\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"0.04\"} 0\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"0.08\"} 0\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"0.16\"} 0\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"0.32\"} 0\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"0.64\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"1.28\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"2.56\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"5.12\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"10.24\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"20.48\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"40.96\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"81.92\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"163.84\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"327.68\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"655.36\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"1310.72\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"2621.44\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"5242.88\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"+Inf\"} 1\n"
    "scheduler_pod_scheduling_sli_duration_seconds_sum{attempts=\"1\"} 0.5\n"
    "scheduler_pod_scheduling_sli_duration_seconds_count{attempts=\"1\"} 1\n"
    "# HELP scheduler_preemption_attempts_total [STABLE] Total preemption attempts in the cluster "
    "till now\n"
    "# TYPE scheduler_preemption_attempts_total counter\n"
    "scheduler_preemption_attempts_total 1\n"
    "# HELP scheduler_preemption_victims [STABLE] Number of selected preemption victims for "
    "preemption initiated by a single pod\n"
    "# TYPE scheduler_preemption_victims histogram\n"
    "scheduler_preemption_victims_bucket{le=\"1\"} 0\n"
    "scheduler_preemption_victims_bucket{le=\"2\"} 1\n"
    "scheduler_preemption_victims_bucket{le=\"4\"} 1\n"
    "scheduler_preemption_victims_bucket{le=\"8\"} 1\n"
    "scheduler_preemption_victims_bucket{le=\"16\"} 1\n"
    "scheduler_preemption_victims_bucket{le=\"32\"} 1\n"
    "scheduler_preemption_victims_bucket{le=\"64\"} 1\n"
    "scheduler_preemption_victims_bucket{le=\"+Inf\"} 1\n"
    "scheduler_preemption_victims_sum 2\n"
    "scheduler_preemption_victims_count 1\n"
    "# HELP scheduler_queue_incoming_entities_total [ALPHA] Number of scheduling entities added to "
    "scheduling queues by event, queue type, and entity type. Entity types are either 'pod' (for "
    "individual pods that are not members of any podgroup) or 'podgroup'.\n"
    "# TYPE scheduler_queue_incoming_entities_total counter\n"
    "scheduler_queue_incoming_entities_total{event=\"PodAdd\",queue=\"active\",type=\"pod\"} 1\n"
    "# HELP scheduler_queue_incoming_pods_total [STABLE] Number of pods added to scheduling queues "
    "by event and queue type.\n"
    "# TYPE scheduler_queue_incoming_pods_total counter\n"
    "scheduler_queue_incoming_pods_total{event=\"PodAdd\",queue=\"active\"} 1\n"
    "# HELP scheduler_queued_entities [ALPHA] Number of queued scheduling entities ('pod' or "
    "'podgroup'; 'pod' stands for individual pods that are not members of any podgroup) by the "
    "queue type. 'active' means number of entities in activeQ; 'backoff' means number of entities "
    "in backoffQ; 'unschedulable' means number of entities in unschedulableEntities that the "
    "scheduler attempted to schedule and failed; 'gated' is the number of unschedulable entities "
    "that the scheduler never attempted to schedule because they are gated.\n"
    "# TYPE scheduler_queued_entities gauge\n"
    "scheduler_queued_entities{queue=\"active\",type=\"pod\"} 2\n"
    "scheduler_queued_entities{queue=\"backoff\",type=\"pod\"} 1\n"
    "# HELP scheduler_schedule_attempts_total [STABLE] Number of attempts to schedule pods, by the "
    "result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal "
    "scheduler problem.\n"
    "# TYPE scheduler_schedule_attempts_total counter\n"
    "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"scheduled\"} 3\n"
    "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"unschedulable\"} 1\n"
    "# HELP scheduler_scheduling_algorithm_duration_seconds [BETA] Scheduling algorithm latency "
    "in seconds\n"
    "# TYPE scheduler_scheduling_algorithm_duration_seconds histogram\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.001\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.002\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.004\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.008\"} 0\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.016\"} 1\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.032\"} 1\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.064\"} 1\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.128\"} 1\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.256\"} 1\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"0.512\"} 1\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"1.024\"} 1\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"2.048\"} 1\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"4.096\"} 1\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"8.192\"} 1\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"16.384\"} 1\n"
    "scheduler_scheduling_algorithm_duration_seconds_bucket{le=\"+Inf\"} 1\n"
    "scheduler_scheduling_algorithm_duration_seconds_sum 0.0123\n"
    "scheduler_scheduling_algorithm_duration_seconds_count 1\n"
    "# HELP scheduler_scheduling_attempt_duration_seconds [STABLE] Scheduling attempt latency in "
    "seconds (scheduling algorithm + binding)\n"
    "# TYPE scheduler_scheduling_attempt_duration_seconds histogram\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"0.001\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"0.002\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"0.004\"} 2\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"0.008\"} 2\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"0.016\"} 2\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"0.032\"} 2\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"0.064\"} 2\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"0.128\"} 2\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"0.256\"} 2\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"0.512\"} 2\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"1.024\"} 2\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"2.048\"} 2\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"4.096\"} 2\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"8.192\"} 2\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"16.384\"} 2\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"scheduled\",le=\"+Inf\"} 3\n"
    "scheduler_scheduling_attempt_duration_seconds_sum{profile=\"default-scheduler\",result="
    "\"scheduled\"} 20.0035\n"
    "scheduler_scheduling_attempt_duration_seconds_count{profile=\"default-scheduler\",result="
    "\"scheduled\"} 3\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"0.001\"} 0\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"0.002\"} 0\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"0.004\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"0.008\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"0.016\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"0.032\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"0.064\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"0.128\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"0.256\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"0.512\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"1.024\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"2.048\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"4.096\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"8.192\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"16.384\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result="
    "\"unschedulable\",le=\"+Inf\"} 1\n"
    "scheduler_scheduling_attempt_duration_seconds_sum{profile=\"default-scheduler\",result="
    "\"unschedulable\"} 0.003\n"
    "scheduler_scheduling_attempt_duration_seconds_count{profile=\"default-scheduler\",result="
    "\"unschedulable\"} 1\n"
    "# HELP scheduler_unschedulable_pods [BETA] The number of unschedulable pods broken down by "
    "plugin name. A pod will increment the gauge for all plugins that caused it to not schedule "
    "and so this metric have meaning only when broken down by plugin.\n"
    "# TYPE scheduler_unschedulable_pods gauge\n"
    "scheduler_unschedulable_pods{plugin=\"NodeResourcesFit\",profile=\"default-scheduler\"} 1\n";

/* Go's strconv.FormatFloat(v, 'g', -1, 64) for these bit patterns. */
static const struct {
    uint64_t bits;
    const char *text;
} GO_FLOATS[] = {
    /* Powers of two whose correctly rounded shortest string does not read back. */
    {0x5120000000000000ull, "6.070840288205404e+82"},
    {0x1690000000000000ull, "5.225680706521042e-200"},
    {0x4b50000000000000ull, "6.129982163463556e+54"},
    {0x3ff0000000000000ull, "1"},
    {0xbff0000000000000ull, "-1"},
    {0x3fb999999999999aull, "0.1"},
    {0x3fc999999999999aull, "0.2"},
    {0x4059000000000000ull, "100"},
    {0x412e848000000000ull, "1e+06"},
    {0x412e847e00000000ull, "999999"},
    {0x3f1a36e2eb1c432dull, "0.0001"},
    {0x3ee4f8b588e368f1ull, "1e-05"},
    {0x40fe240b33333333ull, "123456.7"},
    {0x444b1ae4d6e2ef50ull, "1e+21"},
    {0x4415af1d78b58c40ull, "1e+20"},
    {0x43e56a95319d63e1ull, "1.2345678901234567e+19"},
    {0x7fefffffffffffffull, "1.7976931348623157e+308"},
    {0x0000000000000001ull, "5e-324"},
    {0x0010000000000000ull, "2.2250738585072014e-308"},
    {0x3f201f31f46ed246ull, "0.000123"},
    {0x3fd5555555555555ull, "0.3333333333333333"},
    {0x3fe5555555555555ull, "0.6666666666666666"},
    {0x4340000000000000ull, "9.007199254740992e+15"},
    {0x4011666666666666ull, "4.35"},
    {0x3fd3333333333333ull, "0.3"},
    {0x3f0a36e2eb1c432dull, "5e-05"},
    {0x4040aaaaaaaaaaabull, "33.333333333333336"},
    {0xdeec33b94b0e3549ull, "-1.8030529848826704e+149"},
    {0x4a1b160023f3bf50ull, "9.896536284191356e+48"},
    {0xf29b2fbb9b385a6full, "-1.1601899751894739e+244"},
    {0xbcece93b2ed7c0bbull, "-3.2097723712934093e-15"},
    {0x526f864688c9143full, "1.2542298570790078e+89"},
    {0x502c2d31e92523caull, "1.6313103807227302e+78"},
    {0xe7a3a1f5e39a8471ull, "-1.7494694783744914e+191"},
    {0x7abe447c12f68981ull, "1.7581371629293293e+283"},
    {0xbcf53581cae1bb5eull, "-4.709346629657632e-15"},
    {0xd03a7f8d1d5c7d93ull, "-3.0682873800206133e+78"},
    {0xab0fa7a788182f57ull, "-2.826652473697216e-101"},
    {0xfc14d8ec670d4886ull, "-5.079101059587366e+289"},
    {0x5591563572b1f1c6ull, "1.5531960598022718e+104"},
    {0xb691b3143b9ba7b8ull, "-7.750725210991381e-46"},
    {0xc1a0568eb5397622ull, "-1.370540426122294e+08"},
    {0x33fd4a86575a8c13ull, "2.916464637980756e-58"},
    {0x36947cb6b99fe45bull, "8.971446962393673e-46"},
    {0xbf545c42c72b6278ull, "-0.0012426998261415838"},
    {0x116429ac9fe19aedull, "6.809008570472855e-225"},
    {0xd84aedaffbfc5f70ull, "-2.122071212324851e+117"},
    {0x4e1096416405c128ull, "1.117957226509191e+68"},
    {0xff2bc50ce5eb62f8ull, "-3.80870433730955e+304"},
    {0x32069ca9eb3aa5d3ull, "1.048405623500808e-67"},
    {0xefad76e1833334deull, "-8.934371244854398e+229"},
    {0xb805e595b3566e2bull, "-8.043619662495209e-39"},
    {0x6645408555205e07ull, "4.51510517752759e+184"},
    {0x9b9a4cbdaef6479aull, "-1.0384234345156531e-175"},
    {0x907861e485650aa2ull, "-2.512809951860005e-229"},
    {0x2c59e33e0e957decull, "4.847906888729215e-95"},
    {0x021573bc3f667e26ull, "1.2813091993805356e-298"},
    {0x816bb0027df917bdull, "-8.074928726792193e-302"},
    {0xa93a39612fd9c4eeull, "-4.3617707645401815e-110"},
    {0x33006c5aa1f9d09dull, "4.990341069691167e-63"},
    {0x078a7bbee9284646ull, "2.4477517778051316e-272"},
    {0x4ee16caeca236222ull, "9.620781570326492e+71"},
    {0x435ba6008065b8d8ull, "3.112938182219453e+16"},
    {0x13bc7deb10d944d7ull, "1.3224035667793861e-213"},
    {0x9ca6d1923de92816ull, "-1.180924630047669e-170"},
    {0xae580fb11b19383aull, "-1.9352641830743046e-85"},
    {0xae20b900020ce725ull, "-1.681266342282293e-86"},
    {0x3f9bbdbe3c105187ull, "0.027091"},
    {0x3f1947877a9e86ddull, "9.64333e-05"},
    {0x400434dbdf8f4730ull, "2.52581"},
    {0x3f81c847011b5dffull, "0.00868278"},
    {0x3ee29fc33dfd9d97ull, "8.88065e-06"},
    {0x3f5f0d97175e407dull, "0.00189533"},
    {0x3ee283379ced3db3ull, "8.82748e-06"},
    {0x3fc8288051c9f72full, "0.188736"},
    {0x3fd76c3b927d45a6ull, "0.365981"},
    {0x3f865569bee07affull, "0.0109051"},
    {0x408033395810624eull, "518.403"},
    {0x3f9fe7b9b81d125full, "0.0311574"},
    {0x3ff3f0110a137f39ull, "1.24611"},
    {0x3fef996b76709fa5ull, "0.987478"},
    {0x4021a10b630a9153ull, "8.81454"},
    {0x3f4d89390a73dd84ull, "0.000901368"},
    {0x3ee3c38671009ac6ull, "9.4241e-06"},
    {0x4120398000000000ull, "531648"},
    {0x3f010a58376865dfull, "3.2502e-05"},
    {0x3f1720ce99bb0375ull, "8.82269e-05"},
    {0x4279cc2ea65a672eull, "1.7727966673024487e+12"},
    {0x40d7f28cafe1402dull, "24522.198234856292"},
    {0x3d7ce1dedb24143dull, "1.641769060994954e-12"},
    {0x3dd247cfa3c63822ull, "6.650411553362412e-11"},
    {0x40cb7d94c7d83091ull, "14075.162348769869"},
    {0x419753feb719e6e5ull, "9.784516577529486e+07"},
    {0x428dd934ae59e8adull, "4.1023411187810845e+12"},
    {0x42b006dcddbb8010ull, "1.7621661367168062e+13"},
    {0x419b92d1f2fdf8d1ull, "1.1565170874801947e+08"},
    {0x41140f2d7b17b892ull, "328651.37020767585"},
    {0x427674eb56d2e2e3ull, "1.5432137720781804e+12"},
    {0x3f184d639ef4bbb3ull, "9.270592248776417e-05"},
    {0x3e01744499589289ull, "5.07983255019332e-10"},
    {0x3e7d728c9c8c6aa5ull, "1.0970032983082018e-07"},
    {0x424f21081c89a739ull, "2.6739633179530643e+11"},
    {0x41c89b423a61f117ull, "8.2565643676517e+08"},
    {0x3f40228fc9d1e10full, "0.0004924013225169626"},
    {0x3e1a685c8306bf22ull, "1.5371282129998455e-09"},
    {0x429b8873b54c4703ull, "7.568217690897753e+12"},
    {0x42d1b81f683e108bull, "7.792999431993817e+13"},
};

/* prometheus.ExponentialBuckets of the scheduler's histograms, as bits. */
static const uint64_t UPSTREAM_BUCKET_BITS[] = {
    /* Exp(0.001, 2, 15) */
    0x3f50624dd2f1a9fcull,
    0x3f60624dd2f1a9fcull,
    0x3f70624dd2f1a9fcull,
    0x3f80624dd2f1a9fcull,
    0x3f90624dd2f1a9fcull,
    0x3fa0624dd2f1a9fcull,
    0x3fb0624dd2f1a9fcull,
    0x3fc0624dd2f1a9fcull,
    0x3fd0624dd2f1a9fcull,
    0x3fe0624dd2f1a9fcull,
    0x3ff0624dd2f1a9fcull,
    0x4000624dd2f1a9fcull,
    0x4010624dd2f1a9fcull,
    0x4020624dd2f1a9fcull,
    0x4030624dd2f1a9fcull,
    /* Exp(0.0001, 2, 12) */
    0x3f1a36e2eb1c432dull,
    0x3f2a36e2eb1c432dull,
    0x3f3a36e2eb1c432dull,
    0x3f4a36e2eb1c432dull,
    0x3f5a36e2eb1c432dull,
    0x3f6a36e2eb1c432dull,
    0x3f7a36e2eb1c432dull,
    0x3f8a36e2eb1c432dull,
    0x3f9a36e2eb1c432dull,
    0x3faa36e2eb1c432dull,
    0x3fba36e2eb1c432dull,
    0x3fca36e2eb1c432dull,
    /* Exp(1e-05, 1.5, 20) */
    0x3ee4f8b588e368f1ull,
    0x3eef75104d551d6aull,
    0x3ef797cc39ffd610ull,
    0x3f01b1d92b7fe08cull,
    0x3f0a8ac5c13fd0d2ull,
    0x3f13e81450efdc9eull,
    0x3f1ddc1e7967caedull,
    0x3f266516db0dd832ull,
    0x3f30cbd1244a6226ull,
    0x3f3931b9b66f9339ull,
    0x3f42e54b48d3ae6bull,
    0x3f4c57f0ed3d85a0ull,
    0x3f5541f4b1ee2438ull,
    0x3f5fe2ef0ae53654ull,
    0x3f67ea33482be8bfull,
    0x3f71efa67620ee8full,
    0x3f7ae779b13165d6ull,
    0x3f842d9b44e50c60ull,
    0x3f8e4468e7579290ull,
    0x3f96b34ead81adecull,
    /* Exp(0.01, 2, 20) */
    0x3f847ae147ae147bull,
    0x3f947ae147ae147bull,
    0x3fa47ae147ae147bull,
    0x3fb47ae147ae147bull,
    0x3fc47ae147ae147bull,
    0x3fd47ae147ae147bull,
    0x3fe47ae147ae147bull,
    0x3ff47ae147ae147bull,
    0x40047ae147ae147bull,
    0x40147ae147ae147bull,
    0x40247ae147ae147bull,
    0x40347ae147ae147bull,
    0x40447ae147ae147bull,
    0x40547ae147ae147bull,
    0x40647ae147ae147bull,
    0x40747ae147ae147bull,
    0x40847ae147ae147bull,
    0x40947ae147ae147bull,
    0x40a47ae147ae147bull,
    0x40b47ae147ae147bull,
    /* Exp(1, 2, 5) */
    0x3ff0000000000000ull,
    0x4000000000000000ull,
    0x4010000000000000ull,
    0x4020000000000000ull,
    0x4030000000000000ull,
    /* Exp(1, 2, 7) */
    0x3ff0000000000000ull,
    0x4000000000000000ull,
    0x4010000000000000ull,
    0x4020000000000000ull,
    0x4030000000000000ull,
    0x4040000000000000ull,
    0x4050000000000000ull,
};

/* --- each metric type, written as client_golang writes it ---------------------------------- */

Test(metrics, exposition_matches_client_golang)
{
    ks_metrics *r = ks__metrics_create();
    static const char *const code_method[] = {"code", "method"};
    static const char *const room[] = {"room"};
    static const char *const kind[] = {"kind"};
    static const char *const x[] = {"x"};
    static const double lat[] = {0.1, 0.5, 1};
    double size[3];
    cr_assert_eq(ks__metrics_exponential_buckets(1, 2, 3, size), 0);

    ks_metric_family *c =
        reg(r, KS_METRIC_COUNTER, "test_requests_total",
            "Requests served.\nSecond line with a backslash \\ here.", code_method, 2, NULL, 0);
    ks_metric_family *p = reg(r, KS_METRIC_COUNTER, "test_plain_total", "Plain.", NULL, 0, NULL, 0);
    ks_metric_family *g = reg(r, KS_METRIC_GAUGE, "test_temperature_celsius",
                              "Temperature \"quoted\".", room, 1, NULL, 0);
    ks_metric_family *h =
        reg(r, KS_METRIC_HISTOGRAM, "test_latency_seconds", "Latency.", NULL, 0, lat, 3);
    ks_metric_family *hv =
        reg(r, KS_METRIC_HISTOGRAM, "test_size_bytes", "Sizes.", kind, 1, size, 3);
    reg(r, KS_METRIC_COUNTER, "test_unused_total", "Never used.", x, 1, NULL, 0);

    ks__metrics_inc(KS_METRICS_WITH(c, "200", "GET"));
    ks__metrics_inc(KS_METRICS_WITH(c, "200", "GET"));
    ks__metrics_add(KS_METRICS_WITH(c, "500", "POST"), 1.5);
    ks__metrics_inc(KS_METRICS_WITH(c, "a\"b\\c\nd", "GET"));
    ks__metrics_add(KS_METRICS_SOLO(p), 1e6);
    ks__metrics_set(KS_METRICS_WITH(g, "kitchen"), 21.5);
    ks__metrics_set(KS_METRICS_WITH(g, "attic"), -3);
    volatile double a = 0.1, b = 0.2; /* computed at run time, as in Go with variables */
    ks__metrics_set(KS_METRICS_WITH(g, "cellar"), a + b);
    ks__metrics_set(KS_METRICS_WITH(g, "vault"), 1e21);
    ks__metrics_set(KS_METRICS_WITH(g, "zero"), -0.0);
    ks__metrics_set(KS_METRICS_WITH(g, "tiny"), 5e-324);
    ks__metrics_set(KS_METRICS_WITH(g, "nan"), NAN);
    ks__metrics_set(KS_METRICS_WITH(g, "inf"), INFINITY);
    ks__metrics_set(KS_METRICS_WITH(g, "neginf"), -INFINITY);
    ks__metrics_set(KS_METRICS_WITH(g, "one"), 123456);
    ks__metrics_set(KS_METRICS_WITH(g, "two"), 1234567);
    ks__metrics_set(KS_METRICS_WITH(g, "three"), 0.0001);
    ks__metrics_set(KS_METRICS_WITH(g, "four"), 0.00001);
    ks_metric *five = KS_METRICS_WITH(g, "five");
    ks__metrics_inc(five);
    ks__metrics_dec(five);
    ks__metrics_dec(five);
    const double obs[] = {0.05, 0.1, 0.7, 3};
    for (size_t i = 0; i < 4; i++)
        ks__metrics_observe(KS_METRICS_SOLO(h), obs[i]);
    ks__metrics_observe(KS_METRICS_WITH(hv, "b"), 4);
    ks__metrics_observe(KS_METRICS_WITH(hv, "a"), 100);

    char *text = render(r);
    expect_text(text, GOLDEN_TYPES);
    free(text);
    ks__metrics_destroy(r);
}

Test(metrics, empty_registry_renders_nothing)
{
    ks_metrics *r = ks__metrics_create();
    char *text = render(r);
    cr_assert_str_eq(text, "");
    free(text);
    ks__metrics_destroy(r);
}

/* Label values: backslash, double quote and newline are escaped, everything else (UTF-8
 * included) passes through; label names print in sorted order whatever the declared order. */
Test(metrics, label_values_escaped_and_sorted)
{
    ks_metrics *r = ks__metrics_create();
    static const char *const labels[] = {"zone", "app"};
    ks_metric_family *f = reg(r, KS_METRIC_GAUGE, "test_escape", "Help with \\ and\nnewline \"q\".",
                              labels, 2, NULL, 0);
    ks__metrics_set(KS_METRICS_WITH(f, "tab\there", "caf\xc3\xa9 \"x\" \\y\\ \nz"), 7);
    ks__metrics_set(KS_METRICS_WITH(f, NULL, ""), 1);
    char *text = render(r);
    expect_text(text,
                "# HELP test_escape Help with \\\\ and\\nnewline \"q\".\n"
                "# TYPE test_escape gauge\n"
                "test_escape{app=\"\",zone=\"\"} 1\n"
                "test_escape{app=\"caf\xc3\xa9 \\\"x\\\" \\\\y\\\\ \\nz\",zone=\"tab\there\"} 7\n");
    free(text);
    ks__metrics_destroy(r);
}

/* --- kubesched's families ------------------------------------------------------------------ */

Test(metrics, scheduler_families_fresh)
{
    ks_metrics *r = ks__metrics_create();
    ks_sched_metrics m;
    cr_assert_eq(ks__metrics_register_scheduler(r, &m), 0);
    char *text = render(r);
    expect_text(text, GOLDEN_SCHED_FRESH);
    free(text);
    cr_assert_eq(ks__metrics_register_scheduler(r, &m), KS_EEXIST);
    ks__metrics_destroy(r);
}

Test(metrics, scheduler_families_match_upstream)
{
    ks_metrics *r = ks__metrics_create();
    ks_sched_metrics m;
    const char *prof = "default-scheduler";
    cr_assert_eq(ks__metrics_register_scheduler(r, &m), 0);

    /* metrics.PodScheduled / PodUnschedulable: the attempt counter and its duration. */
    const double scheduled[] = {0.0005, 0.003, 20};
    for (size_t i = 0; i < 3; i++) {
        ks__metrics_inc(KS_METRICS_WITH(m.schedule_attempts, KS_METRICS_RESULT_SCHEDULED, prof));
        ks__metrics_observe(
            KS_METRICS_WITH(m.scheduling_attempt_duration, KS_METRICS_RESULT_SCHEDULED, prof),
            scheduled[i]);
    }
    ks__metrics_inc(KS_METRICS_WITH(m.schedule_attempts, KS_METRICS_RESULT_UNSCHEDULABLE, prof));
    ks__metrics_observe(
        KS_METRICS_WITH(m.scheduling_attempt_duration, KS_METRICS_RESULT_UNSCHEDULABLE, prof),
        0.003);
    ks__metrics_observe(m.scheduling_algorithm_duration_solo, 0.0123);
    ks__metrics_set(KS_METRICS_WITH(m.pending_pods, KS_METRICS_QUEUE_ACTIVE), 2);
    ks__metrics_set(KS_METRICS_WITH(m.pending_pods, KS_METRICS_QUEUE_BACKOFF), 1);
    ks__metrics_set(KS_METRICS_WITH(m.pending_pods, KS_METRICS_QUEUE_UNSCHEDULABLE), 0);
    ks__metrics_set(KS_METRICS_WITH(m.pending_pods, KS_METRICS_QUEUE_GATED), 0);
    ks__metrics_inc(KS_METRICS_WITH(m.queue_incoming_pods, "active", "PodAdd"));
    ks__metrics_inc(
        KS_METRICS_WITH(m.queue_incoming_entities, "active", "PodAdd", KS_METRICS_ENTITY_POD));
    ks__metrics_set(
        KS_METRICS_WITH(m.queued_entities, KS_METRICS_QUEUE_ACTIVE, KS_METRICS_ENTITY_POD), 2);
    ks__metrics_set(
        KS_METRICS_WITH(m.queued_entities, KS_METRICS_QUEUE_BACKOFF, KS_METRICS_ENTITY_POD), 1);
    ks__metrics_inc(m.pod_scheduled_after_flush_solo);
    ks__metrics_observe(
        KS_METRICS_WITH(m.framework_extension_point_duration, "Filter", "Success", prof), 0.00025);
    ks__metrics_observe(
        KS_METRICS_WITH(m.plugin_execution_duration, "NodeResourcesFit", "Filter", "Success"),
        0.00002);
    ks__metrics_observe(KS_METRICS_WITH(m.pod_scheduling_sli_duration, "1"), 0.5);
    ks__metrics_observe(m.pod_scheduling_attempts_solo, 1);
    ks__metrics_inc(m.preemption_attempts_solo);
    ks__metrics_observe(m.preemption_victims_solo, 2);
    ks__metrics_observe(KS_METRICS_WITH(m.permit_wait_duration, "Success"), 0.001);
    ks__metrics_set(KS_METRICS_WITH(m.cache_size, KS_METRICS_CACHE_NODES), 3);
    ks__metrics_set(KS_METRICS_WITH(m.cache_size, KS_METRICS_CACHE_PODS), 5);
    ks__metrics_set(KS_METRICS_WITH(m.cache_size, KS_METRICS_CACHE_ASSUMED_PODS), 0);
    ks__metrics_set(KS_METRICS_WITH(m.unschedulable_pods, "NodeResourcesFit", prof), 1);
    ks__metrics_inc(KS_METRICS_WITH(m.plugin_evaluation, "NodeResourcesFit", "Filter", prof));
    ks__metrics_inc(KS_METRICS_WITH(m.plugin_evaluation, "we\"ird\\plug\nin", "Filter", prof));
    ks__metrics_set(KS_METRICS_WITH(m.goroutines, KS_METRICS_OPERATION_BINDING), 1);
    ks__metrics_observe(KS_METRICS_WITH(m.event_handling_duration, "NodeAdd"), 0.0002);

    char *text = render(r);
    expect_text(text, GOLDEN_SCHED);
    free(text);
    ks__metrics_destroy(r);
}

/* --- numbers ------------------------------------------------------------------------------- */

static double from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

Test(metrics, bucket_bounds_equal_upstream)
{
    static const struct {
        double start, factor;
        size_t count;
    } specs[] = {{0.001, 2, 15}, {0.0001, 2, 12}, {0.00001, 1.5, 20},
                 {0.01, 2, 20},  {1, 2, 5},       {1, 2, 7}};
    size_t k = 0;
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        double out[32];
        cr_assert_eq(
            ks__metrics_exponential_buckets(specs[s].start, specs[s].factor, specs[s].count, out),
            0);
        for (size_t i = 0; i < specs[s].count; i++, k++) {
            double want = from_bits(UPSTREAM_BUCKET_BITS[k]);
            cr_assert(memcmp(&out[i], &want, sizeof want) == 0,
                      "Exp(%g, %g, %zu)[%zu] = %.17g, upstream %.17g", specs[s].start,
                      specs[s].factor, specs[s].count, i, out[i], want);
        }
    }
    cr_assert_eq(k, sizeof UPSTREAM_BUCKET_BITS / sizeof UPSTREAM_BUCKET_BITS[0]);
    double out[2];
    cr_assert_eq(ks__metrics_exponential_buckets(0, 2, 2, out), KS_EINVAL);
    cr_assert_eq(ks__metrics_exponential_buckets(1, 1, 2, out), KS_EINVAL);
    cr_assert_eq(ks__metrics_exponential_buckets(1, 2, 0, out), KS_EINVAL);
}

Test(metrics, format_float_matches_go)
{
    for (size_t i = 0; i < sizeof GO_FLOATS / sizeof GO_FLOATS[0]; i++) {
        char buf[KS_METRICS_FLOAT_BUF];
        double v = from_bits(GO_FLOATS[i].bits);
        size_t n = ks__metrics_format_float(v, buf);
        cr_assert_str_eq(buf, GO_FLOATS[i].text, "bits 0x%016llx",
                         (unsigned long long)GO_FLOATS[i].bits);
        cr_assert_eq(n, strlen(buf));
        /* The negation too: Go only adds a '-'. */
        char neg[KS_METRICS_FLOAT_BUF + 1];
        snprintf(neg, sizeof neg, "%s%s", GO_FLOATS[i].text[0] == '-' ? "" : "-",
                 GO_FLOATS[i].text + (GO_FLOATS[i].text[0] == '-'));
        ks__metrics_format_float(-v, buf);
        cr_assert_str_eq(buf, neg);
    }
    char buf[KS_METRICS_FLOAT_BUF];
    ks__metrics_format_float(-0.0, buf);
    cr_assert_str_eq(buf, "-0");
    ks__metrics_format_float(0.0, buf);
    cr_assert_str_eq(buf, "0");
    ks__metrics_format_float(NAN, buf);
    cr_assert_str_eq(buf, "NaN");
    ks__metrics_format_float(-INFINITY, buf);
    cr_assert_str_eq(buf, "-Inf");
    ks__metrics_format_float(-1.7976931348623157e308, buf);
    cr_assert_str_eq(buf, "-1.7976931348623157e+308");
}

/* An observation equal to a bound counts in that bucket (le = "less or equal"). */
Test(metrics, histogram_bounds_are_inclusive)
{
    ks_metrics *r = ks__metrics_create();
    static const double bounds[] = {1, 2, INFINITY};
    ks_metric_family *f = reg(r, KS_METRIC_HISTOGRAM, "test_h", "H.", NULL, 0, bounds, 3);
    ks_metric *h = KS_METRICS_SOLO(f);
    ks__metrics_observe(h, -5);
    ks__metrics_observe(h, 1);
    ks__metrics_observe(h, 2);
    ks__metrics_observe(h, 2.0000000000000004);
    cr_assert_eq(ks__metrics_count(h), 4);
    cr_assert_float_eq(ks__metrics_sum(h), 0.0000000000000004, 1e-12);
    char *text = render(r);
    expect_text(text, "# HELP test_h H.\n"
                      "# TYPE test_h histogram\n"
                      "test_h_bucket{le=\"1\"} 2\n"
                      "test_h_bucket{le=\"2\"} 3\n"
                      "test_h_bucket{le=\"+Inf\"} 4\n"
                      "test_h_sum 4.440892098500626e-16\n"
                      "test_h_count 4\n");
    free(text);
    ks__metrics_destroy(r);
}

/* --- threads ------------------------------------------------------------------------------- */

#define THREADS 8
#define ROUNDS 50000

static struct {
    ks_metrics *r;
    ks_metric_family *counter, *gauge, *hist;
    pthread_barrier_t start;
} conc;

static void *hammer(void *arg)
{
    long id = (long)arg;
    char mine[16];
    snprintf(mine, sizeof mine, "t%ld", id);
    pthread_barrier_wait(&conc.start);
    /* Resolve the shared series every round (lookups race with creations), and a series of
     * this thread's own. */
    for (int i = 0; i < ROUNDS; i++) {
        ks__metrics_inc(KS_METRICS_WITH(conc.counter, "shared"));
        ks__metrics_add(KS_METRICS_WITH(conc.counter, mine), 0.5);
        ks__metrics_add(KS_METRICS_WITH(conc.gauge, "g"), i % 2 ? 1.25 : -0.25);
        ks__metrics_observe(KS_METRICS_SOLO(conc.hist), (double)(i % 4));
        if (id == 0 && i % 5000 == 0) {
            char *text = NULL;
            cr_assert_eq(ks__metrics_render(conc.r, &text, NULL), 0);
            free(text);
        }
    }
    return NULL;
}

Test(metrics, concurrent_updates_sum_exactly)
{
    static const char *const who[] = {"who"};
    static const double b[] = {0.5, 1.5, 2.5};
    conc.r = ks__metrics_create();
    conc.counter = reg(conc.r, KS_METRIC_COUNTER, "test_c_total", "C.", who, 1, NULL, 0);
    conc.gauge = reg(conc.r, KS_METRIC_GAUGE, "test_g", "G.", who, 1, NULL, 0);
    conc.hist = reg(conc.r, KS_METRIC_HISTOGRAM, "test_h", "H.", NULL, 0, b, 3);
    pthread_barrier_init(&conc.start, NULL, THREADS);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, hammer, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&conc.start);

    cr_assert_eq(ks__metrics_value(KS_METRICS_WITH(conc.counter, "shared")),
                 (double)THREADS * ROUNDS);
    for (int i = 0; i < THREADS; i++) {
        char mine[16];
        snprintf(mine, sizeof mine, "t%d", i);
        /* 0.5 is exact in binary: every partial sum is too, so the total is exact. */
        cr_assert_eq(ks__metrics_value(KS_METRICS_WITH(conc.counter, mine)), ROUNDS * 0.5);
    }
    cr_assert_eq(ks__metrics_value(KS_METRICS_WITH(conc.gauge, "g")),
                 THREADS * (ROUNDS / 2) * (1.25 - 0.25));
    ks_metric *h = KS_METRICS_SOLO(conc.hist);
    cr_assert_eq(ks__metrics_count(h), (uint64_t)THREADS * ROUNDS);
    cr_assert_eq(ks__metrics_sum(h), THREADS * (ROUNDS / 4) * (0.0 + 1 + 2 + 3));

    char *text = render(conc.r);
    char want[128];
    snprintf(want, sizeof want, "test_h_bucket{le=\"0.5\"} %d\ntest_h_bucket{le=\"1.5\"} %d\n",
             THREADS * ROUNDS / 4, THREADS * ROUNDS / 2);
    cr_assert_not_null(strstr(text, want), "%s", text);
    snprintf(want, sizeof want, "test_h_count %d\n", THREADS * ROUNDS);
    cr_assert_not_null(strstr(text, want));
    free(text);
    ks__metrics_destroy(conc.r);
}

/* --- series handles and misuse ------------------------------------------------------------- */

Test(metrics, series_handles_are_stable)
{
    ks_metrics *r = ks__metrics_create();
    static const char *const l[] = {"a", "b"};
    ks_metric_family *f = reg(r, KS_METRIC_COUNTER, "test_many_total", "Many.", l, 2, NULL, 0);
    ks_metric *first = KS_METRICS_WITH(f, "x", "y");
    ks_metric *all[1000];
    for (int i = 0; i < 1000; i++) {
        char v[16];
        snprintf(v, sizeof v, "%d", i);
        all[i] = KS_METRICS_WITH(f, v, "y");
        ks__metrics_add(all[i], i);
    }
    /* "x","y" versus "x\xff"... : the separator keeps ("ab","c") apart from ("a","bc"). */
    cr_assert_neq(KS_METRICS_WITH(f, "ab", "c"), KS_METRICS_WITH(f, "a", "bc"));
    cr_assert_eq(KS_METRICS_WITH(f, "x", "y"), first);
    for (int i = 0; i < 1000; i++) {
        char v[16];
        snprintf(v, sizeof v, "%d", i);
        cr_assert_eq(KS_METRICS_WITH(f, v, "y"), all[i]);
        cr_assert_eq(ks__metrics_value(all[i]), i);
    }
    ks__metrics_destroy(r);
}

Test(metrics, rejects_bad_definitions)
{
    ks_metrics *r = ks__metrics_create();
    ks_metric_family *f = (ks_metric_family *)1;
    static const char *const le[] = {"le"};
    static const char *const dup[] = {"a", "a"};
    static const char *const reserved[] = {"__a"};
    static const char *const bad[] = {"1a"};
    static const double down[] = {1, 1};
    static const double nan[] = {NAN};
    ks_metric_opts o = {KS_METRIC_COUNTER, "9lives", "x", 0, NULL, 0, NULL, 0};
    cr_assert_eq(ks__metrics_register(r, &o, &f), KS_EINVAL);
    cr_assert_null(f);
    o.name = "ok_name:sub";
    o.help = "";
    cr_assert_eq(ks__metrics_register(r, &o, &f), KS_EINVAL);
    o.help = "x";
    o.type = 0;
    cr_assert_eq(ks__metrics_register(r, &o, &f), KS_EINVAL);
    o.type = KS_METRIC_HISTOGRAM;
    o.labels = le;
    o.nlabels = 1;
    cr_assert_eq(ks__metrics_register(r, &o, &f), KS_EINVAL);
    o.labels = dup;
    o.nlabels = 2;
    cr_assert_eq(ks__metrics_register(r, &o, &f), KS_EINVAL);
    o.labels = reserved;
    o.nlabels = 1;
    cr_assert_eq(ks__metrics_register(r, &o, &f), KS_EINVAL);
    o.labels = bad;
    cr_assert_eq(ks__metrics_register(r, &o, &f), KS_EINVAL);
    o.labels = NULL;
    o.nlabels = 0;
    o.buckets = down;
    o.nbuckets = 2;
    cr_assert_eq(ks__metrics_register(r, &o, &f), KS_EINVAL);
    o.buckets = nan;
    o.nbuckets = 1;
    cr_assert_eq(ks__metrics_register(r, &o, &f), KS_EINVAL);
    /* "le" is fine on a counter, and a name is taken once. */
    ks_metric_opts c = {KS_METRIC_COUNTER, "ok_name:sub", "x", 0, le, 1, NULL, 0};
    cr_assert_eq(ks__metrics_register(r, &c, &f), 0);
    cr_assert_eq(ks__metrics_register(r, &c, NULL), KS_EEXIST);

    /* Wrong value counts and invalid UTF-8 give NULL, and NULL series ignore updates. */
    cr_assert_null(ks__metrics_child(f, NULL, 0));
    cr_assert_null(KS_METRICS_WITH(f, "a", "b"));
    cr_assert_null(KS_METRICS_WITH(f, "\xc3("));
    cr_assert_null(KS_METRICS_WITH(f, "\xed\xa0\x80")); /* a UTF-16 surrogate */
    cr_assert_null(KS_METRICS_WITH(f, "\xe0\x80\xaf")); /* overlong */
    cr_assert_not_null(KS_METRICS_WITH(f, "\xf0\x9f\x98\x80"));
    ks__metrics_inc(NULL);
    ks__metrics_dec(NULL);
    ks__metrics_add(NULL, 1);
    ks__metrics_set(NULL, 1);
    ks__metrics_observe(NULL, 1);
    cr_assert_eq(ks__metrics_value(NULL), 0);
    ks__metrics_destroy(r);
    ks__metrics_destroy(NULL);
}

/* Updates of the wrong kind do nothing; a counter never goes down. */
Test(metrics, wrong_kind_updates_ignored)
{
    ks_metrics *r = ks__metrics_create();
    static const double b[] = {1};
    ks_metric *c = KS_METRICS_SOLO(reg(r, KS_METRIC_COUNTER, "c_total", "C.", NULL, 0, NULL, 0));
    ks_metric *g = KS_METRICS_SOLO(reg(r, KS_METRIC_GAUGE, "g", "G.", NULL, 0, NULL, 0));
    ks_metric *h = KS_METRICS_SOLO(reg(r, KS_METRIC_HISTOGRAM, "h", "H.", NULL, 0, b, 1));
    ks__metrics_add(c, -1);
    ks__metrics_add(c, NAN);
    ks__metrics_dec(c);
    ks__metrics_set(c, 9);
    ks__metrics_observe(c, 9);
    ks__metrics_add(c, 2.5);
    ks__metrics_add(c, 1e30); /* beyond the integer part: goes to the float part */
    cr_assert_eq(ks__metrics_value(c), 1e30 + 2.5);
    ks__metrics_observe(g, 3);
    ks__metrics_add(g, -2);
    cr_assert_eq(ks__metrics_value(g), -2);
    ks__metrics_inc(h);
    ks__metrics_set(h, 4);
    ks__metrics_add(h, 4);
    cr_assert_eq(ks__metrics_count(h), 0);
    cr_assert_eq(ks__metrics_count(g), 0);
    ks__metrics_destroy(r);
}
