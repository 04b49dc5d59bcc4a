/*
 * Benchmark shaped like upstream scheduler_perf SchedulingBasic: nodes with 4 CPU, 32Gi, 110 pods;
 * pods requesting 100m CPU and 500Mi; `--nodes` nodes, `--init-pods` pods already placed, then
 * `--pods` pods to schedule through `simulate` (real queue, framework, plugins, binding cycle)
 * with the default profile. Prints pods/s of the scheduling loop and peak RSS.
 *
 * Not a test: run on demand, e.g.
 *   build/tests/bench_scheduling_basic --nodes 5000 --init-pods 1000 --pods 10000
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "host_api.h"
#include "registry.h"
#include "simulate.h"

static void write_pod(FILE *f, const char *name, const char *node)
{
    fprintf(f,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"sched-0\","
            "\"uid\":\"%s\"},\"spec\":{%s%s%s\"containers\":[{\"name\":\"pause\",\"image\":\"registry.k8s.io/pause:3.10\","
            "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"500Mi\"}}}]}}",
            name, name, node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "");
}

int main(int argc, char **argv)
{
    int nodes = 5000, init_pods = 1000, pods = 10000;
    uint64_t seed = 1;
    int parallelism = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--nodes"))
            nodes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--init-pods"))
            init_pods = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--pods"))
            pods = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--parallelism"))
            parallelism = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10);
    }
    char path[] = "/tmp/kubesched-bench-XXXXXX.json";
    int fd = mkstemps(path, 5);
    if (fd < 0) {
        perror("mkstemps");
        return 1;
    }
    FILE *f = fdopen(fd, "w");
    fputs("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n", f);
    char name[64], node[64];
    for (int i = 0; i < nodes; i++) {
        fprintf(f,
                "%s{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%d\",\"labels\":"
                "{\"kubernetes.io/hostname\":\"node-%d\"}},\"status\":{\"allocatable\":{\"cpu\":\"4\","
                "\"memory\":\"32Gi\",\"pods\":\"110\"},\"capacity\":{\"cpu\":\"4\",\"memory\":\"32Gi\",\"pods\":\"110\"}}}\n",
                i ? "," : "", i, i);
    }
    for (int i = 0; i < init_pods; i++) {
        snprintf(name, sizeof(name), "init-pod-%d", i);
        snprintf(node, sizeof(node), "node-%d", i % nodes);
        fputc(',', f);
        write_pod(f, name, node);
        fputc('\n', f);
    }
    for (int i = 0; i < pods; i++) {
        snprintf(name, sizeof(name), "pod-%d", i);
        fputc(',', f);
        write_pod(f, name, NULL);
        fputc('\n', f);
    }
    fputs("]}\n", f);
    fclose(f);

    ks__host_init();
    char err[1024] = "";
    ks_config *cfg = NULL;
    ks_registry *reg = ks__registry_new();
    ks_profile_plan *plans = NULL;
    if (ks__config_default(&cfg, err, sizeof(err)) != 0 || ks__config_plan(cfg, reg, &plans, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench: %s\n", err);
        unlink(path);
        return 1;
    }
    if (parallelism > 0)
        cfg->parallelism = parallelism;
    ks_simulate_opts o = {path, cfg, plans, KS_OUTPUT_NONE, 0, seed, stdout};
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
    printf("SchedulingBasic nodes=%d init-pods=%d pods=%d parallelism=%d\n", nodes, init_pods, pods, cfg->parallelism);
    printf("  scheduled %zu, unschedulable %zu, errors %zu\n", st.scheduled, st.unschedulable, st.errors);
    printf("  scheduling loop: %.3f s, %.0f pods/s\n", st.seconds, (double)st.scheduled / st.seconds);
    printf("  total incl. loading the %d objects: %.3f s\n", nodes + init_pods + pods, total);
    printf("  peak RSS: %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
    ks__config_plans_free(plans, cfg->nprofiles);
    ks__config_free(cfg);
    ks__registry_free(reg);
    return st.scheduled == (size_t)pods ? 0 : 1;
}
