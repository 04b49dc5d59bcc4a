/*
 * kubesched command line:
 *   kubesched simulate --cluster FILE [--config FILE] [--output table|json] [--explain] [--strict]
 *                      [--seed N] [--feature-gates Name=bool,...] [-v N]
 *   kubesched validate-config FILE [-v N]
 *   kubesched --config FILE [--kubeconfig FILE] [--leader-elect* ...] [-v N]
 *                                                        (live mode, apisource.h)
 *   kubesched --version
 * Errors go to stderr as one sentence naming the file and what would fix it; exit status 1 for
 * bad input, 2 for bad usage.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live/apisource.h"
#include "config/config.h"
#include "sched/features.h"
#include "sched/framework.h"
#include "sched/host_api.h"
#include "live/leaderelect.h"
#include "sched/loader.h"
#include "util/log.h"
#include "config/registry.h"
#include "cli/simulate.h"
#include "sched/plugin_guard.h"
#include "util/duration.h"
#include "in_tree.h"

static void usage_simulate(FILE *f)
{
    fprintf(
        f,
        "Usage: kubesched simulate --cluster FILE [flags]\n"
        "\n"
        "Schedules every pending pod of a cluster file with the scheduler's own code, in memory,\n"
        "and prints one line (or JSON object) per scheduling attempt.\n"
        "\n"
        "  --cluster FILE        Nodes, Pods and the other objects the plugins read, as YAML or\n"
        "                        JSON manifests or `kubectl get ... -o yaml` output. Objects of\n"
        "                        a resource a plugin watches (ks_resource_watch, e.g. PodGroup)\n"
        "                        are read too; other kinds are counted and skipped.\n"
        "  --config FILE         A KubeSchedulerConfiguration (default: the default profile).\n"
        "  --output table|json   The report's form (default table; json: docs in DESIGN.md).\n"
        "  --explain             Per attempt, each node's Filter verdicts and Score results.\n"
        "  --strict              Unknown fields and kinds in the cluster file are errors.\n"
        "  --seed N              The seed of every random choice (default 1): the same file and\n"
        "                        seed give the same decisions.\n"
        "  --max-attempts N      The most scheduling attempts one pod gets (default %d). A pod\n"
        "                        that reaches it after a failed attempt is not retried and stays\n"
        "                        pending, with a warning naming it.\n"
        "  --feature-gates G=B,...  OpportunisticBatching, NominatedNodeNameForExpectation,\n"
        "                        SchedulerPopFromBackoffQ (on by default, as in v1.37),\n"
        "                        GenericWorkload (off by default, as in v1.37: PodGroups).\n"
        "  --plugin-call-deadline D  A plugin call running longer is reported with the plugin,\n"
        "                        extension point, pod and node, and ends the run after the\n"
        "                        decisions so far were printed (default 10s; 0: no watchdog).\n"
        "  -v N                  Log verbosity (klog-style, to stderr).\n"
        "\n"
        "Time is virtual: backoffs and Permit waits (a gang waiting for its members) take no wall\n"
        "time; when nothing else can happen the clock jumps to the next backoff expiry or Permit\n"
        "timeout, and each timeout is reported as the pod's failed attempt.\n"
        "Exit status: 0 whatever the decisions; 1 for a bad file or configuration; 2 for bad\n"
        "flags; 3 when the plugin-call deadline passed; 128+signal when a plugin crashed.\n",
        KS_SIM_MAX_ATTEMPTS);
}

static void usage(FILE *f)
{
    fputs(
        "Usage:\n"
        "  kubesched simulate --cluster FILE [--config FILE] [--output table|json] [--explain] "
        "[--strict] [--seed N] [--max-attempts N] [--feature-gates GATE=BOOL,...] "
        "[--plugin-call-deadline D] [-v N]\n"
        "      Schedule every pending pod of a cluster file (YAML/JSON manifests, or the output "
        "of\n"
        "      `kubectl get nodes,pods -A -o yaml`) and print the decisions. Unknown fields and "
        "kinds\n"
        "      in the file are warnings, errors with --strict. Gates: OpportunisticBatching,\n"
        "      NominatedNodeNameForExpectation, SchedulerPopFromBackoffQ (on by default, as in\n"
        "      v1.37), GenericWorkload (off by default, as in v1.37). A plugin call that runs past "
        "--plugin-call-deadline (default 10s; 0: no\n"
        "      watchdog) is reported and ends the run, as a crash does, after the decisions so "
        "far\n"
        "      were printed (exit status 3; a crash keeps 128+signal). "
        "`kubesched simulate --help` tells more.\n"
        "  kubesched validate-config FILE [-v N]\n"
        "      Check a KubeSchedulerConfiguration and print the effective profiles.\n"
        "  kubesched --config FILE [--kubeconfig FILE] [--bind-address ADDR] [--secure-port N] [-v "
        "N]\n"
        "            [--tls-cert-file FILE --tls-private-key-file FILE]\n"
        "            [--leader-elect[=BOOL]] [--leader-elect-lease-duration D] "
        "[--leader-elect-renew-deadline D]\n"
        "            [--leader-elect-retry-period D] [--leader-elect-resource-lock leases]\n"
        "            [--leader-elect-resource-name NAME] [--leader-elect-resource-namespace NS]\n"
        "            [--feature-gates GATE=BOOL,...] [--plugin-call-deadline D]\n"
        "            [--authentication-kubeconfig FILE] [--authorization-kubeconfig FILE] "
        "[--client-ca-file FILE]\n"
        "            [--authentication-token-webhook-cache-ttl D] "
        "[--authorization-webhook-cache-authorized-ttl D]\n"
        "            [--authorization-webhook-cache-unauthorized-ttl D]\n"
        "            [--authorization-always-allow-paths P,...] [--profiling=BOOL]\n"
        "      Run against the API server (clientConnection.kubeconfig, else --kubeconfig, else "
        "in-cluster).\n"
        "      /healthz, /readyz, /metrics over HTTPS on ADDR:N (default 0.0.0.0:10259; a "
        "self-signed\n"
        "      certificate unless --tls-cert-file/--tls-private-key-file are given), as "
        "kube-scheduler:\n"
        "      client certificates against --client-ca-file (CN the user, O the groups), bearer\n"
        "      tokens by TokenReview, requests by SubjectAccessReview, through\n"
        "      --authentication-kubeconfig / --authorization-kubeconfig or the in-cluster config "
        "(else\n"
        "      every request is anonymous and only the always-allowed paths, default\n"
        "      /healthz,/readyz,/livez, and group system:masters are allowed); answers cached "
        "10s.\n"
        "      No profiling endpoints are served (--profiling is accepted and has no endpoint).\n"
        "      The --leader-elect* flags that are given override the file's leaderElection values\n"
        "      (durations in Go syntax: 15s, 1m30s, 500ms). With leader election on, only the "
        "replica\n"
        "      holding the Lease (default kube-system/kube-scheduler, the one kube-scheduler uses: "
        "set\n"
        "      leaderElection.resourceName, e.g. kubesched) schedules. A plugin call that runs "
        "past\n"
        "      --plugin-call-deadline (default 10s; 0: no watchdog; PreBind and Bind are not\n"
        "      watched) fails /readyz (plugin-watchdog), releases the Lease and exits with status "
        "3.\n"
        "  kubesched --version\n",
        f);
}

/* Everything a command needs from a configuration: parsed, plugins loaded, planned. */
typedef struct loaded {
    ks_config *cfg;
    ks_registry *reg;
    ks_loaded_module **mods;
    ks_profile_plan *plans;
} loaded;

static void loaded_free(loaded *l)
{
    if (l->plans)
        ks__config_plans_free(l->plans, l->cfg->nprofiles);
    ks__config_free(l->cfg);
    ks__registry_free(l->reg);
    ks__loader_close_all(l->mods);
    memset(l, 0, sizeof(*l));
}

/* le_flags: the --leader-elect* flags of live mode, or NULL. The error, if any, in err. */
static int load_config_err(const char *path, const ks_leader_election_flags *le_flags, loaded *l,
                           char *err, size_t errlen)
{
    int rc;
    memset(l, 0, sizeof(*l));
    /* The in-tree module first: its plugins' args schemas and rules apply while the file loads. */
    rc = 0;
    if (!(l->reg = ks__registry_new())) {
        snprintf(err, errlen, "out of memory");
        rc = KS_ENOMEM;
    }
    if (rc == 0)
        rc = ks__loader_register_linked(l->reg, &ks_in_tree_module, KS_IN_TREE_ORIGIN,
                                        ks__host_api(), err, errlen);
    if (rc == 0)
        rc = path ? ks__config_load_file_flags(l->reg, path, le_flags, &l->cfg, err, errlen)
                  : ks__config_default(l->reg, &l->cfg, err, errlen);
    if (rc == 0)
        rc = ks__loader_load_config_plugins(l->cfg, l->reg, ks__host_api(), &l->mods, err, errlen);
    /* The shared objects' own args schemas are known only now that they are loaded. */
    if (rc == 0)
        rc = ks__config_check_plugin_args(l->cfg, l->reg, err, errlen);
    if (rc == 0)
        rc = ks__config_plan(l->cfg, l->reg, &l->plans, err, errlen);
    if (rc != 0) {
        /* A leaderElection value may have come from a flag rather than from the file. */
        if (le_flags && le_flags->set && strstr(err, "leaderElection."))
            strncat(err, " (after the --leader-elect* flags were applied)",
                    errlen - strlen(err) - 1);
        if (!err[0])
            snprintf(err, errlen, "invalid configuration");
        loaded_free(l);
    }
    return rc;
}

static int load_config(const char *path, const ks_leader_election_flags *le_flags, loaded *l)
{
    char err[2048] = "";
    int rc = load_config_err(path, le_flags, l, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "kubesched: %s\n", err);
    return rc;
}

/* ---- configuration reload in live mode (core/live/reloader.h) ------------------------------ */

/* A configuration a reload loaded: what its profile set borrows, released with it. */
typedef struct reload_bundle {
    ks_config_bundle b;
    loaded l;
} reload_bundle;

static void reload_release(void *p)
{
    reload_bundle *rb = p;
    loaded_free(&rb->l);
    free(rb);
}

/* Loads path exactly as start-up did (the same --leader-elect* flags applied). */
static int reload_load(void *ctx, const char *path, ks_config_bundle **out, char *err,
                       size_t errlen)
{
    reload_bundle *rb = calloc(1, sizeof(*rb));
    if (!rb) {
        snprintf(err, errlen, "out of memory");
        return KS_ENOMEM;
    }
    int rc = load_config_err(path, ctx, &rb->l, err, errlen);
    if (rc != 0) {
        free(rb);
        return rc;
    }
    rb->b.cfg = rb->l.cfg;
    rb->b.plans = rb->l.plans;
    *out = &rb->b; /* first member: reload_release gets rb */
    return 0;
}

/* The start-up configuration's plugins (registry, shared objects, plans), released by the
 * scheduler once a reload replaced them and they drained; the configuration itself stays (live
 * mode reads the values a reload cannot change from it). */
static void release_startup_plugins(void *p)
{
    loaded *l = p;
    ks__config_plans_free(l->plans, l->cfg->nprofiles);
    l->plans = NULL;
    ks__registry_free(l->reg);
    l->reg = NULL;
    ks__loader_close_all(l->mods);
    l->mods = NULL;
}

static int cmd_validate(int argc, char **argv)
{
    const char *path = NULL;
    loaded l;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-v") && i + 1 < argc)
            ks__log_verbosity = atoi(argv[++i]);
        else if (argv[i][0] == '-') {
            fprintf(stderr, "kubesched validate-config: unknown flag %s\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (!path)
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "kubesched validate-config: which file? e.g. kubesched validate-config "
                        "examples/config.yaml\n");
        return 2;
    }
    if (load_config(path, NULL, &l) != 0)
        return 1;
    /* Build every profile's plugins once, so that bad plugin args are reported here too. */
    for (size_t i = 0; i < l.cfg->nprofiles; i++) {
        char err[2048] = "";
        ks_framework *fw;
        if (ks__framework_new(&l.plans[i], &fw, err, sizeof(err)) != 0) {
            fprintf(stderr, "kubesched: %s: %s\n", path, err);
            loaded_free(&l);
            return 1;
        }
        ks__framework_free(fw);
    }
    printf("Semantics: kube-scheduler " KS_CFG_KUBERNETES_VERSION
           " (default plugins, args defaults and validation, plugin decisions)\n");
    ks__config_print(l.cfg, l.plans, stdout);
    loaded_free(&l);
    return 0;
}

/* --feature-gates Name=bool,... (upstream's flag; kubesched knows OpportunisticBatching,
 * NominatedNodeNameForExpectation, SchedulerPopFromBackoffQ and GenericWorkload, features.c). */
static int set_feature_gates(const char *spec)
{
    char err[512];
    if (ks__feature_gates_set(spec, err, sizeof(err)) == 0)
        return 0;
    fprintf(stderr, "kubesched: %s\n", err);
    return -1;
}

/* --plugin-call-deadline D (Go duration; 0 turns the watchdog off): how long one plugin call may
 * run before the watchdog reports it and ends the process (plugin_guard.h). */
static int parse_deadline(const char *cmd, const char *v, int64_t *ns)
{
    if (ks__duration_parse(v, ns) != 0 || *ns < 0) {
        fprintf(stderr,
                "%s: --plugin-call-deadline %s: expected a duration such as 10s or 500ms (0 turns "
                "the plugin call watchdog off)\n",
                cmd, v);
        return 2;
    }
    return 0;
}

/* Crash reports for every plugin call, and the watchdog when deadline_ns > 0. */
static int install_guard(const char *cmd, int64_t deadline_ns)
{
    char err[256];
    if (ks__guard_install(deadline_ns, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", cmd, err);
        return 1;
    }
    return 0;
}

static int cmd_simulate(int argc, char **argv)
{
    int64_t deadline_ns = KS_GUARD_DEFAULT_DEADLINE_NS;
    const char *cluster = NULL, *config = NULL;
    ks_output output = KS_OUTPUT_TABLE;
    int explain = 0, strict = 0, max_attempts = KS_SIM_MAX_ATTEMPTS;
    uint64_t seed = 1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--cluster") && v) {
            cluster = v;
            i++;
        } else if (!strcmp(a, "--config") && v) {
            config = v;
            i++;
        } else if ((!strcmp(a, "--output") || !strcmp(a, "-o")) && v) {
            if (!strcmp(v, "json"))
                output = KS_OUTPUT_JSON;
            else if (!strcmp(v, "table"))
                output = KS_OUTPUT_TABLE;
            else {
                fprintf(stderr,
                        "kubesched simulate: --output %s: valid values are table and json\n", v);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--explain")) {
            explain = 1;
        } else if (!strcmp(a, "--strict")) {
            strict = 1;
        } else if (!strncmp(a, "--plugin-call-deadline", 22) && (a[22] == '=' || (!a[22] && v))) {
            if (parse_deadline("kubesched simulate", a[22] == '=' ? a + 23 : v, &deadline_ns))
                return 2;
            if (a[22] != '=')
                i++;
        } else if (!strcmp(a, "--seed") && v) {
            seed = strtoull(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--max-attempts") && v) {
            char *end;
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > 1000000) {
                fprintf(stderr,
                        "kubesched simulate: --max-attempts %s: expected a number of attempts per "
                        "pod, 1..1000000\n",
                        v);
                return 2;
            }
            max_attempts = (int)n;
            i++;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage_simulate(stdout);
            return 0;
        } else if (!strncmp(a, "--feature-gates", 15) && (a[15] == '=' || (!a[15] && v))) {
            if (set_feature_gates(a[15] == '=' ? a + 16 : v) != 0)
                return 2;
            if (a[15] != '=')
                i++;
        } else if (!strcmp(a, "-v") && v) {
            ks__log_verbosity = atoi(v);
            i++;
        } else {
            fprintf(stderr, "kubesched simulate: unknown or incomplete flag %s\n", a);
            usage_simulate(stderr);
            return 2;
        }
    }
    if (!cluster) {
        fprintf(
            stderr,
            "kubesched simulate: --cluster FILE is required (Nodes and Pods as YAML or JSON)\n");
        return 2;
    }
    if (install_guard("kubesched simulate", deadline_ns) != 0)
        return 1;
    loaded l;
    if (load_config(config, NULL, &l) != 0)
        return 1;
    char err[2048] = "";
    ks_simulate_stats stats;
    ks_simulate_opts o = {cluster, l.cfg,  l.plans, output, explain,
                          seed,    stdout, strict,  stderr, max_attempts};
    int rc = ks__simulate_run(&o, &stats, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "kubesched: %s\n", err[0] ? err : "simulation failed");
    loaded_free(&l);
    return rc == 0 ? 0 : 1;
}

/* Live mode: kubesched --config FILE [--kubeconfig FILE] [-v N]. */
/* For /statusz: kubesched's version, and the Kubernetes minor whose kube-scheduler behaviour it
 * follows (upstream's "emulation version"). */
#define KS_BINARY_VERSION "0.1.0"
#define KS_EMULATED_KUBE_MINOR "1.37"

/* Live mode's flags for /flagz, with pflag's defaults (the values shown when a flag is not
 * given), in the order kube-scheduler's flagz sorts them (by name). */
typedef struct live_flag {
    const char *name, *def;
    int boolean; /* "--name" alone means "true" */
} live_flag;
static const live_flag k_live_flags[] = {
    {"authentication-kubeconfig", "", 0},
    {"authentication-token-webhook-cache-ttl", "10s", 0},
    {"authorization-always-allow-paths", "[/healthz,/readyz,/livez]", 0},
    {"authorization-kubeconfig", "", 0},
    {"authorization-webhook-cache-authorized-ttl", "10s", 0},
    {"authorization-webhook-cache-unauthorized-ttl", "10s", 0},
    {"bind-address", "0.0.0.0", 0},
    {"client-ca-file", "", 0},
    {"config", "", 0},
    {"kubeconfig", "", 0},
    {"leader-elect", "true", 1},
    {"leader-elect-lease-duration", "15s", 0},
    {"leader-elect-renew-deadline", "10s", 0},
    {"leader-elect-resource-lock", "leases", 0},
    {"leader-elect-resource-name", "kube-scheduler", 0},
    {"leader-elect-resource-namespace", "kube-system", 0},
    {"leader-elect-retry-period", "2s", 0},
    {"profiling", "true", 1},
    {"secure-port", "10259", 0},
    {"tls-cert-file", "", 0},
    {"tls-private-key-file", "", 0},
    {"v", "0", 0},
};
#define N_LIVE_FLAGS (sizeof(k_live_flags) / sizeof(k_live_flags[0]))

/* The value of every live flag after argv (already checked by cmd_run): as given (the last one
 * wins, as pflag), else the default. */
static void flag_values(int argc, char **argv, ks_http_flag out[N_LIVE_FLAGS])
{
    for (size_t k = 0; k < N_LIVE_FLAGS; k++)
        out[k] = (ks_http_flag){k_live_flags[k].name, k_live_flags[k].def};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-')
            continue;
        a += a[1] == '-' ? 2 : 1;
        const char *eq = strchr(a, '=');
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        for (size_t k = 0; k < N_LIVE_FLAGS; k++) {
            if (strlen(k_live_flags[k].name) != nl || strncmp(a, k_live_flags[k].name, nl) != 0)
                continue;
            if (eq)
                out[k].value = eq + 1;
            else if (k_live_flags[k].boolean)
                out[k].value = "true";
            else if (i + 1 < argc)
                out[k].value = argv[++i];
            break;
        }
    }
    /* A string slice shows as pflag's stringSlice.String(): "[a,b]". */
    static char slice[1024];
    for (size_t k = 0; k < N_LIVE_FLAGS; k++)
        if (!strcmp(k_live_flags[k].name, "authorization-always-allow-paths") &&
            out[k].value != k_live_flags[k].def) {
            snprintf(slice, sizeof slice, "[%s]", out[k].value);
            out[k].value = slice;
        }
}

/* "--name=VALUE" or "--name VALUE" (then *i moves past the value): 1 with *out set, else 0. */
static int flag_arg(const char *a, const char *v, const char *name, const char **out, int *i)
{
    size_t n = strlen(name);
    if (strncmp(a, "--", 2) != 0 || strncmp(a + 2, name, n) != 0)
        return 0;
    if (a[2 + n] == '=') {
        *out = a + 3 + n;
        return 1;
    }
    if (a[2 + n] == '\0' && v) {
        *out = v;
        (*i)++;
        return 1;
    }
    return 0;
}

/* A cache TTL flag: a Go duration >= 0. 0 (a zero TTL) is kept as "not cached" (-1), since 0 in
 * the options means the default. */
static int ttl_flag(const char *name, const char *val, int64_t *ns)
{
    if (ks__duration_parse(val, ns) != 0 || *ns < 0) {
        fprintf(stderr, "kubesched: --%s %s: expected a duration such as 10s or 1m\n", name, val);
        return -1;
    }
    if (*ns == 0)
        *ns = -1;
    return 0;
}

/* The serving port's delegated authentication and authorization flags (kube-scheduler's). */
typedef struct auth_flags {
    const char *authn_kc, *authz_kc, *client_ca;
    int64_t token_ttl, allow_ttl, deny_ttl;
    char *paths_buf; /* the --authorization-always-allow-paths value, split in place */
    const char *paths[64];
    size_t npaths;
    int paths_given;
} auth_flags;

/* 1: a flag of this group was taken; 0: not one; -1: a bad value (reported). */
static int auth_flag(auth_flags *f, const char *a, const char *v, int *i)
{
    const char *val;
    if (flag_arg(a, v, "authentication-kubeconfig", &val, i)) {
        f->authn_kc = val;
    } else if (flag_arg(a, v, "authorization-kubeconfig", &val, i)) {
        f->authz_kc = val;
    } else if (flag_arg(a, v, "client-ca-file", &val, i)) {
        f->client_ca = val;
    } else if (flag_arg(a, v, "authentication-token-webhook-cache-ttl", &val, i)) {
        return ttl_flag("authentication-token-webhook-cache-ttl", val, &f->token_ttl) ? -1 : 1;
    } else if (flag_arg(a, v, "authorization-webhook-cache-authorized-ttl", &val, i)) {
        return ttl_flag("authorization-webhook-cache-authorized-ttl", val, &f->allow_ttl) ? -1 : 1;
    } else if (flag_arg(a, v, "authorization-webhook-cache-unauthorized-ttl", &val, i)) {
        return ttl_flag("authorization-webhook-cache-unauthorized-ttl", val, &f->deny_ttl) ? -1 : 1;
    } else if (flag_arg(a, v, "authorization-always-allow-paths", &val, i)) {
        /* pflag's StringSlice: comma-separated, each flag given replaces the list */
        free(f->paths_buf);
        f->npaths = 0;
        f->paths_given = 1;
        if (!(f->paths_buf = strdup(val)))
            return -1;
        for (char *save = NULL, *p = strtok_r(f->paths_buf, ",", &save); p;
             p = strtok_r(NULL, ",", &save)) {
            if (f->npaths == sizeof f->paths / sizeof f->paths[0]) {
                fprintf(stderr, "kubesched: --authorization-always-allow-paths: more than %zu\n",
                        f->npaths);
                return -1;
            }
            f->paths[f->npaths++] = p;
        }
    } else if (!strcmp(a, "--profiling") || !strncmp(a, "--profiling=", 12)) {
        /* CIS 1.4.1 wants --profiling=false; kubesched serves no /debug/pprof either way. The
         * value as pflag's bool (strconv.ParseBool). */
        static const char *const k_bools[] = {"1", "t", "T", "TRUE",  "true",  "True",
                                              "0", "f", "F", "FALSE", "false", "False"};
        size_t b = 0, nb = sizeof k_bools / sizeof k_bools[0];
        while (a[11] == '=' && b < nb && strcmp(a + 12, k_bools[b]) != 0)
            b++;
        if (b == nb) {
            fprintf(stderr,
                    "kubesched: invalid argument \"%s\" for \"--profiling\" flag: want "
                    "true or false\n",
                    a + 12);
            return -1;
        }
    } else {
        return 0;
    }
    return 1;
}

static int cmd_run(int argc, char **argv)
{
    const char *config = NULL, *kubeconfig = NULL, *bind_address = NULL, *tls_cert = NULL,
               *tls_key = NULL;
    int port = 10259; /* upstream --secure-port default */
    int64_t deadline_ns = KS_GUARD_DEFAULT_DEADLINE_NS;
    ks_leader_election_flags le_flags = {0};
    static auth_flags af; /* static: the split paths stay reachable until exit */
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        char ferr[512];
        int used = 0, taken = ks__le_parse_flag(&le_flags, a, v, &used, ferr, sizeof(ferr));
        if (taken < 0) {
            fprintf(stderr, "kubesched: %s\n", ferr);
            return 2;
        }
        int ataken = taken ? 0 : auth_flag(&af, a, v, &i);
        if (ataken < 0)
            return 2;
        if (taken) {
            i += used;
        } else if (ataken) {
            continue;
        } else if (!strncmp(a, "--secure-port=", 14) || (!strcmp(a, "--secure-port") && v)) {
            const char *val = a[13] == '=' ? a + 14 : v;
            char *end;
            long p = strtol(val, &end, 10);
            if (*end || p < 0 || p > 65535) {
                fprintf(
                    stderr,
                    "kubesched: --secure-port %s: expected a port 0..65535 (0 turns serving off)\n",
                    val);
                return 2;
            }
            port = (int)p;
            if (a[13] != '=')
                i++;
        } else if (!strncmp(a, "--plugin-call-deadline", 22) && (a[22] == '=' || (!a[22] && v))) {
            if (parse_deadline("kubesched", a[22] == '=' ? a + 23 : v, &deadline_ns))
                return 2;
            if (a[22] != '=')
                i++;
        } else if (!strncmp(a, "--tls-cert-file=", 16)) {
            tls_cert = a + 16;
        } else if (!strcmp(a, "--tls-cert-file") && v) {
            tls_cert = v;
            i++;
        } else if (!strncmp(a, "--tls-private-key-file=", 23)) {
            tls_key = a + 23;
        } else if (!strcmp(a, "--tls-private-key-file") && v) {
            tls_key = v;
            i++;
        } else if (!strncmp(a, "--bind-address=", 15)) {
            bind_address = a + 15;
        } else if (!strcmp(a, "--bind-address") && v) {
            bind_address = v;
            i++;
        } else if (!strncmp(a, "--config=", 9)) {
            config = a + 9;
        } else if (!strncmp(a, "--kubeconfig=", 13)) {
            kubeconfig = a + 13;
        } else if (!strcmp(a, "--config") && v) {
            config = v;
            i++;
        } else if (!strcmp(a, "--kubeconfig") && v) {
            kubeconfig = v;
            i++;
        } else if (!strncmp(a, "--feature-gates", 15) && (a[15] == '=' || (!a[15] && v))) {
            if (set_feature_gates(a[15] == '=' ? a + 16 : v) != 0)
                return 2;
            if (a[15] != '=')
                i++;
        } else if (!strcmp(a, "-v") && v) {
            ks__log_verbosity = atoi(v);
            i++;
        } else if (!strncmp(a, "--v=", 4) || !strncmp(a, "-v=", 3)) {
            ks__log_verbosity = atoi(strchr(a, '=') + 1);
        } else if (i > 0 && !strcmp(argv[i - 1], "--leader-elect") &&
                   (!strcmp(a, "true") || !strcmp(a, "false"))) {
            fprintf(stderr,
                    "kubesched: --leader-elect takes its value after \"=\" "
                    "(--leader-elect=%s), as a boolean flag does\n",
                    a);
            return 2;
        } else {
            fprintf(stderr, "kubesched: unknown or incomplete flag %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!config) {
        fprintf(stderr, "kubesched: --config FILE is required to run against an API server "
                        "(a KubeSchedulerConfiguration; see examples/)\n");
        return 2;
    }
    if (install_guard("kubesched", deadline_ns) != 0)
        return 1;
    loaded l;
    if (load_config(config, &le_flags, &l) != 0)
        return 1;
    char err[2048] = "";
    ks_http_flag flags[N_LIVE_FLAGS];
    flag_values(argc, argv, flags);
    ks_apisource_opts o = {l.cfg,
                           l.plans,
                           1,
                           kubeconfig,
                           bind_address,
                           port,
                           tls_cert,
                           tls_key,
                           KS_BINARY_VERSION,
                           KS_EMULATED_KUBE_MINOR,
                           flags,
                           N_LIVE_FLAGS,
                           af.authn_kc,
                           af.authz_kc,
                           af.client_ca,
                           af.token_ttl,
                           af.allow_ttl,
                           af.deny_ttl,
                           NULL,
                           0,
                           0,
                           config,
                           {&le_flags, reload_load, reload_release},
                           release_startup_plugins,
                           &l};
    if (af.paths_given) {
        o.always_allow_paths = af.paths;
        o.nalways_allow_paths = af.npaths;
        o.no_always_allow_paths = af.npaths == 0;
    }
    /* A client that hangs up while we write must not kill the scheduler: OpenSSL and libcurl
     * write with plain write(2) (Go programs ignore SIGPIPE on sockets the same way). */
    signal(SIGPIPE, SIG_IGN);
    int rc = ks__apisource_run(&o, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "kubesched: %s\n", err[0] ? err : "live mode failed");
    loaded_free(&l);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    ks__host_init();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "simulate"))
        return cmd_simulate(argc - 2, argv + 2);
    if (!strcmp(argv[1], "validate-config"))
        return cmd_validate(argc - 2, argv + 2);
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("kubesched " KS_BINARY_VERSION
               " (plugin ABI %d.%d, kube-scheduler " KS_CFG_KUBERNETES_VERSION
               " scheduling semantics; API servers v1.35 to v1.37)\n",
               KS_ABI_MAJOR, KS_ABI_MINOR);
        return 0;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    /* Live mode's flags may come in any order (--leader-elect=false --config FILE ...). */
    if (!strncmp(argv[1], "--", 2) || !strcmp(argv[1], "-v"))
        return cmd_run(argc - 1, argv + 1);
    fprintf(stderr, "kubesched: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
}
