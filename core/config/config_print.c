/*
 * `kubesched validate-config FILE` output: the effective configuration after defaulting, merging
 * and planning, in a stable, human-readable form (global settings, then per profile the plugins
 * of each extension point in call order with Score weights, each plugin's args as JSON, and the
 * upstream default plugins that kubesched skipped because it does not ship them yet).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_int.h"

static void print_duration(FILE *out, const char *name, int64_t ms)
{
    char buf[64];
    ks__duration_format(ms * 1000000, buf, sizeof(buf));
    fprintf(out, " %s=%s", name, buf);
}

static void print_json(FILE *out, const cJSON *args)
{
    char *s = args ? cJSON_PrintUnformatted(args) : NULL;
    fputs(s ? s : "{}", out);
    free(s);
}

static const ks_plugin_config *config_of(const ks_profile_config *p, const char *name)
{
    for (size_t i = 0; i < p->nplugin_configs; i++)
        if (strcmp(p->plugin_configs[i].name, name) == 0)
            return &p->plugin_configs[i];
    return NULL;
}

static void print_point_label(FILE *out, ks_point p)
{
    fprintf(out, "  %-12s", ks__point_name(p));
    fputc(' ', out);
}

static int planned_at(const ks_profile_plan *plan, ks_point p, const char *name)
{
    for (size_t j = 0; j < plan->npoint[p]; j++)
        if (strcmp(plan->point[p][j].name, name) == 0)
            return 1;
    return 0;
}

/* Upstream calls Unreserve only on the plugins enabled at reserve, and a Permit only where it is
 * enabled at permit: a plugin that implements both halves of that pair (a gang or quota plugin
 * that releases at Unreserve what its Permit held) but is enabled at one point only silently
 * loses the other half. multiPoint enables both. */
static void print_reserve_permit_warnings(FILE *out, const ks_profile_plan *plan)
{
    for (size_t i = 0; i < plan->ninstances; i++) {
        const char *name = plan->instances[i].name;
        const ks_plugin_desc *d = plan->instances[i].desc;
        int at_reserve = planned_at(plan, KS_PT_RESERVE, name);
        int at_permit = planned_at(plan, KS_PT_PERMIT, name);
        if (d && d->unreserve && at_permit && !at_reserve)
            fprintf(out,
                    "  Warning: %s implements Unreserve but is enabled at permit, not at reserve: "
                    "its Unreserve will not run when a pod it let wait is rejected or times out "
                    "(upstream calls Unreserve on the plugins enabled at reserve); enable it at "
                    "reserve too, or through multiPoint\n",
                    name);
        if (d && d->permit && at_reserve && !at_permit)
            fprintf(out,
                    "  Warning: %s implements Permit but is enabled at reserve, not at permit: "
                    "its Permit will never run; enable it at permit too, or through "
                    "multiPoint\n",
                    name);
    }
}

static void print_planned(FILE *out, const ks_profile_plan *plan)
{
    for (int p = 0; p < KS_PT_COUNT; p++) {
        print_point_label(out, (ks_point)p);
        if (plan->npoint[p] == 0)
            fputs("(none)", out);
        for (size_t j = 0; j < plan->npoint[p]; j++) {
            fprintf(out, "%s%s", j ? ", " : "", plan->point[p][j].name);
            if (p == KS_PT_SCORE)
                fprintf(out, " (weight %d)", (int)plan->point[p][j].weight);
        }
        fputc('\n', out);
    }
    fputs("  Plugin args:\n", out);
    if (plan->ninstances == 0)
        fputs("    (none)\n", out);
    for (size_t i = 0; i < plan->ninstances; i++) {
        const ks_plugin_config *pc = config_of(plan->profile, plan->instances[i].name);
        fprintf(out, "    %s: ", plan->instances[i].name);
        print_json(out, plan->instances[i].args);
        if (pc && pc->so_path)
            fprintf(out, " (shared object: %s)", pc->so_path);
        fputc('\n', out);
    }
    fputs("  Not available in kubesched yet (skipped from the default set): ", out);
    if (plan->nunavailable == 0)
        fputs("none", out);
    for (size_t i = 0; i < plan->nunavailable; i++)
        fprintf(out, "%s%s", i ? ", " : "", plan->unavailable[i]);
    fputc('\n', out);
    print_reserve_permit_warnings(out, plan);
}

/* Without a plan: the merged plugin sets as configured. */
static void print_sets(FILE *out, const ks_profile_config *prof)
{
    for (int p = 0; p < KS_PT_NSETS; p++) {
        const ks_plugin_set *s = &prof->plugins[p];
        print_point_label(out, (ks_point)p);
        fputs("enabled: ", out);
        if (s->nenabled == 0)
            fputs("(none)", out);
        for (size_t j = 0; j < s->nenabled; j++) {
            fprintf(out, "%s%s", j ? ", " : "", s->enabled[j].name);
            if (s->enabled[j].weight)
                fprintf(out, " (weight %d)", (int)s->enabled[j].weight);
        }
        if (s->ndisabled) {
            fputs("; disabled: ", out);
            for (size_t j = 0; j < s->ndisabled; j++)
                fprintf(out, "%s%s", j ? ", " : "", s->disabled[j]);
        }
        fputc('\n', out);
    }
    fputs("  Plugin args:\n", out);
    if (prof->nplugin_configs == 0)
        fputs("    (none)\n", out);
    for (size_t i = 0; i < prof->nplugin_configs; i++) {
        fprintf(out, "    %s: ", prof->plugin_configs[i].name);
        print_json(out, prof->plugin_configs[i].args);
        if (prof->plugin_configs[i].so_path)
            fprintf(out, " (shared object: %s)", prof->plugin_configs[i].so_path);
        fputc('\n', out);
    }
}

void ks__config_print(const ks_config *cfg, const ks_profile_plan *plans, FILE *out)
{
    const char *cc_kubeconfig, *cc_accept;
    if (!cfg || !out)
        return;
    cc_kubeconfig = cfg->client_connection.kubeconfig ? cfg->client_connection.kubeconfig : "";
    cc_accept = cfg->client_connection.accept_content_types
                    ? cfg->client_connection.accept_content_types
                    : "";
    fprintf(out, "Configuration %s (" KS_CFG_API_VERSION ", " KS_CFG_KIND ")\n", cfg->path);
    fprintf(out, "  parallelism: %d\n", (int)cfg->parallelism);
    fprintf(out, "  percentageOfNodesToScore: %d%s\n", (int)cfg->percentage_of_nodes_to_score,
            cfg->percentage_of_nodes_to_score == 0 ? " (adaptive)" : "");
    fprintf(out, "  podInitialBackoffSeconds: %lld\n", (long long)cfg->pod_initial_backoff_seconds);
    fprintf(out, "  podMaxBackoffSeconds: %lld\n", (long long)cfg->pod_max_backoff_seconds);
    fprintf(out, "  enableProfiling: %s\n", cfg->enable_profiling ? "true" : "false");
    fprintf(out, "  enableContentionProfiling: %s\n",
            cfg->enable_contention_profiling ? "true" : "false");
    fprintf(out, "  delayCacheUntilActive: %s\n", cfg->delay_cache_until_active ? "true" : "false");
    fprintf(out, "  leaderElection: leaderElect=%s",
            cfg->leader_election.leader_elect ? "true" : "false");
    print_duration(out, "leaseDuration", cfg->leader_election.lease_duration_ms);
    print_duration(out, "renewDeadline", cfg->leader_election.renew_deadline_ms);
    print_duration(out, "retryPeriod", cfg->leader_election.retry_period_ms);
    fprintf(out, " resourceLock=%s resourceName=%s resourceNamespace=%s\n",
            cfg->leader_election.resource_lock, cfg->leader_election.resource_name,
            cfg->leader_election.resource_namespace);
    fprintf(out,
            "  clientConnection: kubeconfig=\"%s\" acceptContentTypes=\"%s\" contentType=\"%s\" "
            "qps=%g burst=%d\n",
            cc_kubeconfig, cc_accept, cfg->client_connection.content_type,
            cfg->client_connection.qps, (int)cfg->client_connection.burst);
    for (size_t i = 0; i < cfg->nprofiles; i++) {
        const ks_profile_config *p = &cfg->profiles[i];
        fprintf(out, "\nProfile \"%s\"", p->scheduler_name ? p->scheduler_name : "");
        if (p->percentage_of_nodes_to_score >= 0)
            fprintf(out, " (percentageOfNodesToScore: %d)\n", (int)p->percentage_of_nodes_to_score);
        else
            fputs(" (percentageOfNodesToScore: the global setting)\n", out);
        if (plans)
            print_planned(out, &plans[i]);
        else
            print_sets(out, p);
    }
}
