/*
 * Benchmarks shaped like upstream scheduler_perf (test/integration/scheduler_perf), run in-process
 * through `simulate` (real queue, framework, plugins, binding cycle) with the default profile.
 * Nodes: 4 CPU, 32Gi, 110 pods; pods: 100m CPU, 500Mi, namespace sched-0 (already placed, spread
 * round-robin over the nodes, as the scheduler would have placed them) and sched-1 (measured).
 *
 *   --shape basic               SchedulingBasic: default pods                 (5000 / 1000 / 10000)
 *   --shape anti-affinity       SchedulingPodAntiAffinity: required anti-affinity on color=green,
 *                               hostname topology                             (5000 / 1000 / 2000)
 *   --shape affinity            SchedulingPodAffinity: required affinity on color=blue, zone
 *                               topology; every node in zone1                 (5000 / 5000 / 5000)
 *   --shape node-affinity       SchedulingNodeAffinity: zone In [zone1 zone2]; nodes in zone1
 *                                                                             (5000 / 5000 / 10000)
 *   --shape topology-spreading  TopologySpreading: maxSkew 5 on zone, DoNotSchedule; nodes in
 *                               moon-1..3; placed pods are default pods       (5000 / 5000 / 2000)
 *   --shape hostport-conflict   batching/HostPortConflict: hostPort 80, 100m/100Mi; one pod per
 *                               node                                          (5000 / 0 / 5000)
 *   --shape resource-saturation batching/ResourceSaturation: 3 CPU/1Gi on 4 CPU nodes; one pod
 *                               per node                                      (5000 / 0 / 5000)
 * (defaults: nodes / placed pods / measured pods; override with --nodes, --init-pods, --pods).
 * The two batching shapes (upstream test/integration/scheduler_perf/batching, v1.37; upstream
 * runs them at 20000 / 20000) use upstream's scheduler-config-no-topology.yaml (the default
 * profile with PodTopologySpread defaultingType List and no default constraints, so that pods
 * can be signed) and label every --batch-size consecutive pods (default 10) with
 * signature=signature-label-<i / batch-size>, as upstream's signatureBatchSize. Opportunistic
 * batching is on; --feature-gates OpportunisticBatching=false turns it off (upstream's
 * *_OpportunisticBatchingDisabled workloads).
 *
 * Prints pods/s of the scheduling loop and peak RSS. Not a test: run on demand, e.g.
 *   build/tests/bench_scheduling --shape anti-affinity
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "sched/host_api.h"
#include "config/registry.h"
#include "cli/simulate.h"
#include "sched/loader.h"
#include "in_tree.h"
#include "util/log.h"
#include "sched/features.h"

typedef enum {
    BASIC,
    ANTI_AFFINITY,
    AFFINITY,
    NODE_AFFINITY,
    SPREADING,
    HOSTPORT_CONFLICT,
    RESOURCE_SATURATION
} shape;

static const struct {
    const char *name, *upstream;
    int nodes, init, pods;
} shapes[] = {
    [BASIC] = {"basic", "SchedulingBasic", 5000, 1000, 10000},
    [ANTI_AFFINITY] = {"anti-affinity", "SchedulingPodAntiAffinity", 5000, 1000, 2000},
    [AFFINITY] = {"affinity", "SchedulingPodAffinity", 5000, 5000, 5000},
    [NODE_AFFINITY] = {"node-affinity", "SchedulingNodeAffinity", 5000, 5000, 10000},
    [SPREADING] = {"topology-spreading", "TopologySpreading", 5000, 5000, 2000},
    [HOSTPORT_CONFLICT] = {"hostport-conflict", "HostPortConflict", 5000, 0, 5000},
    [RESOURCE_SATURATION] = {"resource-saturation", "ResourceSaturation", 5000, 0, 5000},
};

/* upstream batching/scheduler-config-no-topology.yaml */
static const char no_topology_config[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                         "kind: KubeSchedulerConfiguration\n"
                                         "profiles:\n"
                                         "- schedulerName: default-scheduler\n"
                                         "  pluginConfig:\n"
                                         "  - name: PodTopologySpread\n"
                                         "    args:\n"
                                         "      defaultingType: List\n"
                                         "      defaultConstraints: []\n";

static int batch_size = 10;

/* The spec fragment (labels and affinity) of a pod of this shape; placed pods of the spreading
 * shape are default pods. */
static void pod_parts(shape sh, int measured, const char **labels, const char **spec)
{
    *labels = "";
    *spec = "";
    switch (sh) {
    case ANTI_AFFINITY:
        *labels = "\"labels\":{\"color\":\"green\"},";
        *spec = "\"affinity\":{\"podAntiAffinity\":{"
                "\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
                "\"labelSelector\":{\"matchLabels\":{\"color\":\"green\"}},\"topologyKey\":"
                "\"kubernetes.io/hostname\","
                "\"namespaces\":[\"sched-1\",\"sched-0\"]}]}},";
        break;
    case AFFINITY:
        *labels = "\"labels\":{\"color\":\"blue\"},";
        *spec =
            "\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
            "\"labelSelector\":{\"matchLabels\":{\"color\":\"blue\"}},\"topologyKey\":\"topology."
            "kubernetes.io/zone\","
            "\"namespaces\":[\"sched-1\",\"sched-0\"]}]}},";
        break;
    case NODE_AFFINITY:
        *spec = "\"affinity\":{\"nodeAffinity\":{"
                "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
                "\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/"
                "zone\",\"operator\":\"In\",\"values\":[\"zone1\",\"zone2\"]}]}]}}},";
        break;
    case SPREADING:
        if (measured) {
            *labels = "\"labels\":{\"color\":\"blue\"},";
            *spec = "\"topologySpreadConstraints\":[{\"maxSkew\":5,\"topologyKey\":\"topology."
                    "kubernetes.io/zone\","
                    "\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":{"
                    "\"color\":\"blue\"}}}],";
        }
        break;
    default:
        break;
    }
}

/* upstream templates/pod-hostport-80.yaml and pod-saturation.yaml, with the signature label. */
static void write_batching_pod(FILE *f, shape sh, int i)
{
    fprintf(f,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"pod-%d\","
            "\"namespace\":\"sched-1\",\"uid\":\"sched-1-pod-%d\",\"labels\":{\"signature\":"
            "\"signature-label-%d\"}},\"spec\":{\"containers\":[{\"name\":\"pause\","
            "\"image\":\"registry.k8s.io/pause:3.10.1\",%s\"resources\":{\"requests\":%s}}]}}",
            i, i, i / batch_size,
            sh == HOSTPORT_CONFLICT ? "\"ports\":[{\"containerPort\":80,\"hostPort\":80}]," : "",
            sh == HOSTPORT_CONFLICT ? "{\"cpu\":\"100m\",\"memory\":\"100Mi\"}"
                                    : "{\"cpu\":\"3\",\"memory\":\"1Gi\"}");
}

static void write_pod(FILE *f, shape sh, const char *ns, const char *name, const char *node)
{
    const char *labels, *spec;
    pod_parts(sh, node == NULL, &labels, &spec);
    fprintf(f,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
            "\"%s\","
            "\"uid\":\"%s-%s\",%s\"creationTimestamp\":null},\"spec\":{%s%s%s%s\"containers\":[{"
            "\"name\":\"pause\","
            "\"image\":\"registry.k8s.io/pause:3.10\",\"ports\":[{\"containerPort\":80}],"
            "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"500Mi\"}}}]}}",
            name, ns, ns, name, labels, node ? "\"nodeName\":\"" : "", node ? node : "",
            node ? "\"," : "", spec);
}

static const char *zone_of(shape sh, int i)
{
    static char buf[32];
    switch (sh) {
    case AFFINITY:
    case NODE_AFFINITY:
        return "zone1";
    case SPREADING:
        snprintf(buf, sizeof(buf), "moon-%d", i % 3 + 1);
        return buf;
    default:
        return NULL;
    }
}

int main(int argc, char **argv)
{
    shape sh = BASIC;
    int nodes = -1, init_pods = -1, pods = -1;
    uint64_t seed = 1;
    int parallelism = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--shape")) {
            int found = 0;
            for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
                if (!strcmp(argv[i + 1], shapes[k].name)) {
                    sh = (shape)k;
                    found = 1;
                }
            if (!found) {
                fprintf(stderr,
                        "bench: unknown --shape %s (basic, anti-affinity, affinity, node-affinity, "
                        "topology-spreading, hostport-conflict, resource-saturation)\n",
                        argv[i + 1]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--nodes"))
            nodes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--init-pods"))
            init_pods = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--pods"))
            pods = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--parallelism"))
            parallelism = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-v"))
            ks__log_verbosity = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--batch-size"))
            batch_size = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
        else if (!strcmp(argv[i], "--feature-gates")) {
            char err[512];
            if (ks__feature_gates_set(argv[i + 1], err, sizeof(err)) != 0) {
                fprintf(stderr, "bench: %s\n", err);
                return 2;
            }
        }
    }
    int batching_shape = sh == HOSTPORT_CONFLICT || sh == RESOURCE_SATURATION;
    if (nodes < 0)
        nodes = shapes[sh].nodes;
    if (init_pods < 0)
        init_pods = shapes[sh].init;
    if (pods < 0)
        pods = shapes[sh].pods;
    char path[] = "/tmp/kubesched-bench-XXXXXX.json";
    int fd = mkstemps(path, 5);
    if (fd < 0) {
        perror("mkstemps");
        return 1;
    }
    FILE *f = fdopen(fd, "w");
    fputs("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n", f);
    char name[64], node[64];
    fputs("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"sched-0\"}},\n"
          "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"sched-1\"}}\n",
          f);
    for (int i = 0; i < nodes; i++) {
        const char *zone = zone_of(sh, i);
        fprintf(f,
                ",{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%d\","
                "\"labels\":"
                "{\"kubernetes.io/"
                "hostname\":\"node-%d\"%s%s%s}},\"status\":{\"allocatable\":{\"cpu\":\"4\","
                "\"memory\":\"32Gi\",\"pods\":\"110\"},\"capacity\":{\"cpu\":\"4\",\"memory\":"
                "\"32Gi\",\"pods\":\"110\"}}}\n",
                i, i, zone ? ",\"topology.kubernetes.io/zone\":\"" : "", zone ? zone : "",
                zone ? "\"" : "");
    }
    for (int i = 0; i < init_pods; i++) {
        snprintf(name, sizeof(name), "init-pod-%d", i);
        snprintf(node, sizeof(node), "node-%d", i % nodes);
        fputc(',', f);
        write_pod(f, sh, "sched-0", name, node);
        fputc('\n', f);
    }
    for (int i = 0; i < pods; i++) {
        snprintf(name, sizeof(name), "pod-%d", i);
        fputc(',', f);
        if (batching_shape)
            write_batching_pod(f, sh, i);
        else
            write_pod(f, sh, "sched-1", name, NULL);
        fputc('\n', f);
    }
    fputs("]}\n", f);
    fclose(f);

    ks__host_init();
    char err[1024] = "";
    ks_config *cfg = NULL;
    ks_registry *reg = ks__registry_new();
    ks_profile_plan *plans = NULL;
    if (!reg ||
        ks__loader_register_linked(reg, &ks_in_tree_module, KS_IN_TREE_ORIGIN, ks__host_api(), err,
                                   sizeof(err)) != 0 ||
        (batching_shape
             ? ks__config_load_string(reg, no_topology_config, "scheduler-config-no-topology.yaml",
                                      &cfg, err, sizeof(err))
             : ks__config_default(reg, &cfg, err, sizeof(err))) != 0 ||
        ks__config_plan(cfg, reg, &plans, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench: %s\n", err);
        unlink(path);
        return 1;
    }
    if (parallelism > 0)
        cfg->parallelism = parallelism;
    ks_simulate_opts o = {path, cfg, plans, KS_OUTPUT_NONE, 0, seed, stdout, 0, NULL};
    ks_simulate_stats st;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = ks__simulate_run(&o, &st, err, sizeof(err));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    unlink(path);
    if (rc != 0) {
        fprintf(stderr, "bench: %s\n", err);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double total = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%s nodes=%d init-pods=%d pods=%d parallelism=%d OpportunisticBatching=%s",
           shapes[sh].upstream, nodes, init_pods, pods, cfg->parallelism,
           ks__feature_enabled(KS_FEATURE_OPPORTUNISTIC_BATCHING) ? "true" : "false");
    if (batching_shape)
        printf(" batch-size=%d", batch_size);
    printf("\n");
    printf("  scheduled %zu, unschedulable %zu, errors %zu\n", st.scheduled, st.unschedulable,
           st.errors);
    printf("  scheduling loop: %.3f s, %.0f pods/s\n", st.seconds,
           (double)st.scheduled / st.seconds);
    printf("  total incl. loading the %d objects: %.3f s\n", nodes + init_pods + pods, total);
    printf("  peak RSS: %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
    ks__config_plans_free(plans, cfg->nprofiles);
    ks__config_free(cfg);
    ks__registry_free(reg);
    return st.scheduled == (size_t)pods ? 0 : 1;
}
