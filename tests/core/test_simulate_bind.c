/* simulate's binding: a pod's in-memory bind lands before the next pod is popped, whatever the
 * thread timing, so a file and a seed give the same decisions on every run. A PreBind plugin that
 * takes its time (as a real volume or DRA PreBind does) used to let the next pod's cycle run
 * while the bind was in flight; the bind's pod-add event then arrived during that cycle and
 * requeued a pod that the instant bind would have left unschedulable (upstream's in-flight
 * events), so the number of attempts depended on which thread ran first. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/simulate.h"
#include "config/config.h"
#include "config/registry.h"
#include "harness.h"

static ks_code slow_pre_bind(void *self, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                             ks_status *st)
{
    (void)self, (void)cycle, (void)pod, (void)node, (void)st;
    struct timespec d = {0, 30 * 1000 * 1000};
    nanosleep(&d, NULL);
    return KS_SUCCESS;
}

static const ks_plugin_desc slow_desc = {
    .size = sizeof(ks_plugin_desc), .name = "SlowPreBind", .pre_bind = slow_pre_bind};

/* The JSON decisions of simulating the fixture, with or without the slow PreBind. */
static cJSON *simulate_fixture(const char *fixture, int slow)
{
    char err[1024] = "", path[512];
    const char *yaml = slow ? "apiVersion: kubescheduler.config.k8s.io/v1\n"
                              "kind: KubeSchedulerConfiguration\n"
                              "profiles:\n- schedulerName: default-scheduler\n"
                              "  plugins:\n    preBind: {enabled: [{name: SlowPreBind}]}\n"
                            : "apiVersion: kubescheduler.config.k8s.io/v1\n"
                              "kind: KubeSchedulerConfiguration\n";
    ks_registry *reg = th_registry_new();
    ks_config *cfg = NULL;
    ks_profile_plan *plans = NULL;
    cr_assert_eq(ks__registry_add(reg, &slow_desc, "test", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__config_load_string(reg, yaml, "test.yaml", &cfg, err, sizeof(err)), 0, "%s",
                 err);
    cr_assert_eq(ks__config_plan(cfg, reg, &plans, err, sizeof(err)), 0, "%s", err);
    snprintf(path, sizeof(path), "%s/tests/fixtures/sim/%s", KS_SOURCE_DIR, fixture);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    ks_simulate_opts o = {path, cfg, plans, KS_OUTPUT_JSON, 0, 1, out, 0, NULL, 0};
    ks_simulate_stats st;
    cr_assert_eq(ks__simulate_run(&o, &st, err, sizeof(err)), 0, "%s", err);
    fclose(out);
    cJSON *doc = cJSON_Parse(buf);
    cr_assert_not_null(doc, "not JSON: %s", buf);
    free(buf);
    ks__config_plans_free(plans, cfg->nprofiles);
    ks__config_free(cfg);
    ks__registry_free(reg);
    return doc;
}

TestSuite(simulate_bind, .init = th_init, .fini = th_fini);

/* ipa_spread.yaml: web-4 cannot go next to web-1..3 (required anti-affinity), and nothing it
 * waits for ever happens after web-3 is bound: with the bind landing first it is tried once.
 * A slow PreBind must not change that (it did: web-3's bind arrived during web-4's cycle). */
Test(simulate_bind, a_slow_pre_bind_changes_no_decision)
{
    cJSON *fast = simulate_fixture("ipa_spread.yaml", 0);
    cJSON *slow = simulate_fixture("ipa_spread.yaml", 1);
    const cJSON *pods_fast = cJSON_GetObjectItem(fast, "pods");
    const cJSON *pods_slow = cJSON_GetObjectItem(slow, "pods");
    cr_assert_eq(cJSON_GetArraySize(pods_fast), 5, "attempts without the slow PreBind: %d",
                 cJSON_GetArraySize(pods_fast));
    char *a = cJSON_PrintUnformatted(pods_fast), *b = cJSON_PrintUnformatted(pods_slow);
    cr_assert_str_eq(b, a, "the decisions changed with a slow PreBind");
    free(a);
    free(b);
    cJSON_Delete(fast);
    cJSON_Delete(slow);
}
