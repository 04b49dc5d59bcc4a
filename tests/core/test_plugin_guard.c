/*
 * plugin_guard.c in-process: the crash handler and the watchdog name the call recorded in the
 * thread's slot and run the fatal hook once, then end the process (128+signal, or status 3); and
 * live mode's hook (apisource_leader.c) fails /readyz's plugin-watchdog check on a watchdog
 * report only. Each test runs in its own process (Criterion), so the exits are asserted with
 * .signal / .exit_code; a hook that sees wrong names exits 5 instead.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "api/intern.h"
#include "api/objects.h"
#include "live/apisource_int.h"
#include "sched/framework.h"
#include "sched/plugin_guard.h"

static ks_plugin_inst inst = {
    .name = "Hung", .origin = "/opt/plugins/libhung.so", .deadline_ns = -1 /* the global one */};
static ks_plugin_inst never = {.name = "Never", .deadline_ns = 0 /* kubeschedCallDeadline: 0s */};
static ks_pod pod;

static int same(const char *a, const char *b) { return a && b && !strcmp(a, b); }

static void expect_names(void *ctx, const ks_guard_report *r)
{
    const char *want_sig = ctx;
    int ok = same(r->signame, want_sig) && same(r->plugin, "Hung") &&
             same(r->origin, "/opt/plugins/libhung.so") && same(r->pod_ns, "ns1") &&
             same(r->pod_name, "pod1") && same(r->node, "node-7");
    if (!strcmp(want_sig, "deadline"))
        ok = ok && r->sig == 0 && same(r->point, "Score") && r->elapsed_ms >= 100;
    else
        ok = ok && r->sig == SIGSEGV && same(r->point, "Filter");
    if (!ok)
        _exit(5);
}

static void enter(int ep)
{
    pod.ns = ks__intern("ns1");
    pod.name = ks__intern("pod1");
    ks__guard_enter(&inst, ep, &pod, ks__intern("node-7"));
}

Test(plugin_guard, a_crash_names_the_running_call_then_keeps_the_signal, .signal = SIGSEGV)
{
    char err[128];
    cr_assert_eq(ks__guard_install(0, err, sizeof(err)), 0, "%s", err);
    ks__guard_set_fatal_hook(expect_names, "SIGSEGV");
    enter(KS_EP_FILTER);
    raise(SIGSEGV);
}

Test(plugin_guard, a_call_past_its_deadline_is_reported_then_the_process_exits, .exit_code = 3)
{
    char err[128];
    ks__guard_set_fatal_hook(expect_names, "deadline");
    cr_assert_eq(ks__guard_install(100 * 1000 * 1000LL, err, sizeof(err)), 0, "%s", err);
    enter(KS_EP_SCORE);
    sleep(5); /* the "plugin call": the watchdog ends the process long before */
    ks__guard_leave();
}

Test(plugin_guard, finished_calls_and_unwatched_points_never_trip_the_watchdog)
{
    char err[128];
    ks__guard_set_fatal_hook(expect_names, "deadline");
    cr_assert_eq(ks__guard_install(50 * 1000 * 1000LL, err, sizeof(err)), 0, "%s", err);
    for (int i = 0; i < 40; i++) { /* many short calls: 200ms in all, each far below 50ms */
        enter(KS_EP_FILTER);
        usleep(5000);
        ks__guard_leave();
    }
    enter(KS_EP_PRE_BIND); /* waits on the API server by design: not watched */
    usleep(200 * 1000);
    ks__guard_leave();
    ks__guard_enter(&never, KS_EP_FILTER, NULL, KS_SYM_ABSENT); /* its own deadline: none */
    usleep(200 * 1000);
    ks__guard_leave();
    usleep(200 * 1000); /* idle between calls */
    ks__guard_stop();
}

Test(plugin_guard, live_mode_fails_readyz_on_a_watchdog_report_only)
{
    ks_apisrc s;
    memset(&s, 0, sizeof(s)); /* no elector: releasing the Lease is a no-op here */
    cr_assert_eq(ks__apisrc_plugins_ready(&s), 1);
    ks_guard_report crash = {.sig = SIGSEGV, .signame = "SIGSEGV", .plugin = "Hung"};
    ks__apisrc_on_plugin_fatal(&s, &crash);
    cr_assert_eq(ks__apisrc_plugins_ready(&s), 1, "a crash report cannot do more than report");
    ks_guard_report hung = {.signame = "deadline", .plugin = "Hung", .point = "Score"};
    ks__apisrc_on_plugin_fatal(&s, &hung);
    cr_assert_eq(ks__apisrc_plugins_ready(&s), 0);
}
