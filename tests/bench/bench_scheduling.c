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
 *   --shape in-tree-pvs         volumes/SchedulingInTreePVs: every pod (placed ones too) mounts
 *                               its own bound claim of an AWS EBS volume      (5000 / 1000 / 2000)
 *   --shape migrated-in-tree-pvs volumes/SchedulingMigratedInTreePVs: the same, and every node
 *                               has a CSINode saying kubernetes.io/aws-ebs is migrated to
 *                               ebs.csi.aws.com, 39 attachable (NodeVolumeLimits counts them)
 *                                                                             (5000 / 5000 / 5000)
 *   --shape csi-pvs             volumes/SchedulingCSIPVs: the same nodes, CSI volumes of
 *                               ebs.csi.aws.com                               (5000 / 5000 / 5000)
 *   --shape preemption-pvs      volumes/PreemptionPVs: placed pods 900m (four fill a node),
 *                               measured ones priority 10, 3 CPU, with a bound in-tree claim;
 *                               each preempts three                           (1000 / 4000 / 1000)
 *   --shape gang                podgroup/GangScheduling: --gangs N groups of --pods-per-gang P
 *                               pods (100m/100Mi) that must be placed all together, through
 *                               examples/coscheduling (scheduler-plugins' PodGroup and label;
 *                               upstream uses its v1.37 Workload API, GenericWorkload)
 *                                                                            (5000 / 0 / 3000)
 *   --shape gang-upstream       podgroup/GangScheduling as upstream writes it (v1.37.2
 *                               podgroup/gangscheduling templates): GenericWorkload on,
 *                               scheduling.k8s.io/v1beta1 PodGroups gang-<g> with gang.minCount
 *                               = --pods-per-gang, pods naming theirs in
 *                               spec.schedulingGroup.podGroupName, the default profile (the gate
 *                               appends GangScheduling); prints ms per PodGroup attempt (the
 *                               scheduler's PodGroup cycles)                  (5000 / 0 / 3000)
 *   --shape secrets             volumes/SchedulingSecrets: default pods with a secret volume
 *                                                                             (5000 / 1000 / 10000)
 *   --shape dra                 dra/SchedulingWithResourceClaimTemplate (see write_dra): nodes
 *                               with 10 devices each of a ResourceSlice, initClaims allocated
 *                               (--init-pods), pods with a claim from a template (--pods)
 *                                                                             (500 / 2500 / 2500)
 * (defaults: nodes / placed pods / measured pods; override with --nodes, --init-pods, --pods).
 * The dra shape writes upstream's objects (v1.37.2 dra/performance-config.yaml and templates)
 * instead of the 4 CPU nodes and 100m pods above: its pods request no CPU or memory, one device
 * each. --nodes-without-dra N adds N nodes without the driver (upstream's nodesWithoutDRA),
 * --dra-variant selector|match its "selector" and "match" workloads' claim template (a CEL
 * selector every device passes; five requests with matchAttribute
 * resource.kubernetes.io/pciRoot); --dra-variant extended|extended-implicit|extended-scoring
 * [--classes C] dra/extendedresource's workloads (see write_dra_extended). Upstream creates the
 * measured pods' claims with kube-controller-manager's resourceclaim controller from
 * ResourceClaimTemplate test-claim-template; the bench writes each pod's claim as that controller
 * would (one per pod, named <pod>-resource-<5 characters>, owned by the pod, the template's spec)
 * and sets the pod's status.resourceClaimStatuses, so the measured loop has no controller in it.
 * Upstream's other DRA workloads with a threshold are steady-state ones
 * (SteadyStateClusterResourceClaimTemplate: empty, half, full, selector_empty, match_empty at 500
 * nodes, 60-64 pods/s, pods deleted and created as others are scheduled), which simulate cannot
 * run; the selector and match variants run here in burst at any size, without a threshold. The
 * DRAExtendedResource ones (dra/extendedresource, 70-130 pods/s) are the extended variants. The two
 * batching shapes (upstream test/integration/scheduler_perf/batching, v1.37; upstream runs them at
 * 20000 / 20000) use upstream's scheduler-config-no-topology.yaml (the default profile with
 * PodTopologySpread defaultingType List and no default constraints, so that pods can be signed) and
 * label every --batch-size consecutive pods (default 10) with signature=signature-label-<i /
 * batch-size>, as upstream's signatureBatchSize. Opportunistic batching is on; --feature-gates
 * OpportunisticBatching=false turns it off (upstream's
 * *_OpportunisticBatchingDisabled workloads).
 *
 * The volume shapes build what upstream's createPods op builds with persistentVolumeTemplatePath
 * and persistentVolumeClaimTemplatePath (CreatePodWithPersistentVolume, bindVolume=true): per pod
 * a claim already bound to its own PersistentVolume (see write_volume), so VolumeBinding decides
 * them fully (no PreBind, no binding API calls) and every measured pod must be placed. Their
 * defaults are upstream's workloads that carry a `threshold:` (the 5000Nodes workloads without
 * one are 5000 / 5000 / 1000); PreemptionPVs' only measured workload, 1000Nodes, has none.
 *
 * Upstream's thresholds (v1.37.2 performance-config.yaml: pods/s, the least its CI accepts on its
 * machines) next to kubesched's pods/s, Release build (-DCMAKE_BUILD_TYPE=Release), parallelism
 * 16 on a 2-core machine shared with other builds (load 2 to 5, hence the spread), each run as
 * `/usr/bin/time -v build-rel/tests/bench_scheduling --shape NAME`, 2026-12-02:
 *
 *   shape                  upstream workload             threshold  kubesched pods/s  peak RSS
 *   basic                  SchedulingBasic/5000Nodes_10000Pods    680  2533, 5495       68 MiB
 *   anti-affinity          .../5000Nodes_2000Pods                 180  999, 941         38 MiB
 *   affinity               .../5000Nodes_5000Pods                  70  617, 719         81 MiB
 *   node-affinity          .../5000Nodes_10000Pods                540  4036, 3373      111 MiB
 *   topology-spreading     TopologySpreading/5000Nodes           none  4579, 2576       57 MiB
 *     --pods 5000          .../5000Nodes_5000Pods                 460  3790, 2628       78 MiB
 *   hostport-conflict      (upstream: 20000 nodes)               none  15592, 13808     45 MiB
 *   resource-saturation    (upstream: 20000 nodes)               none  12290, 16176     42 MiB
 *   in-tree-pvs            SchedulingInTreePVs/5000Nodes_2000Pods 290  2611, 2332       64 MiB
 *   migrated-in-tree-pvs   .../5000Nodes_5000Pods                 100  923              184 MiB
 *   csi-pvs                SchedulingCSIPVs/5000Nodes_5000Pods    100  995, 1102        185 MiB
 *   preemption-pvs         PreemptionPVs/1000Nodes               none  194, 149, 133    37 MiB
 *   secrets                SchedulingSecrets/5000Nodes_10000Pods  790  2736, 3595       86 MiB
 *   gang --gangs 1000      GangScheduling/5000Nodes_1000Gangs    none  3933 (0.76 ms/gang) 36 MiB
 *   gang --gangs 2000      .../5000Nodes_2000Gangs_6000Pods      none  3845 (0.78 ms/gang) 52 MiB
 *   gang --gangs 3000      .../5000Nodes_3000Gangs_9000Pods      none  3864 (0.78 ms/gang) 68 MiB
 *   gang --gangs 3 --pods-per-gang 1000  .../3Gangs_..._1000PerGroup  none  727     107 MiB
 *   gang --gangs 6 --pods-per-gang 1000  .../6Gangs_..._1000PerGroup  none  635     139 MiB
 *   gang --gangs 9 --pods-per-gang 1000  .../9Gangs_..._1000PerGroup  none  451     172 MiB
 *   (gang, 2026-12-02 15:42 UTC, load average 3.6, after Coscheduling activates the siblings
 *   from the group's first member at Permit only, as upstream: 1000 / 2000 / 3000 gangs of 3 at
 *   6072 / 5166 / 8429 pods/s, 0.49 / 0.58 / 0.36 ms per gang; 3 / 6 / 9 gangs of 1000 at
 *   2535 / 1743 / 1419 pods/s, 47-81 MiB.)
 *
 * gang-upstream, Release, 2026-12-02 10:13-10:17 UTC, on the same 2 cores while a CI run built
 * and tested beside it (load average 3.5 to 6.0, read from /proc/loadavg before each run: hence
 * the spread), three runs each of `build-rel/tests/bench_scheduling --shape gang-upstream
 * --gangs G [--pods-per-gang P]` (upstream's workloads set no threshold):
 *
 *   G x P     upstream workload (GangScheduling/)   pods/s               ms/PodGroup attempt  RSS
 *   1000 x 3  5000Nodes_1000Gangs_3000Pods          13545, 9151, 3907    0.22, 0.33, 0.77  36 MiB
 *   2000 x 3  5000Nodes_2000Gangs_6000Pods          4691, 3455, 5175     0.64, 0.87, 0.58  51 MiB
 *   3000 x 3  5000Nodes_3000Gangs_9000Pods          10291, 12923, 14226  0.29, 0.23, 0.21  67 MiB
 *   3 x 1000  5000Nodes_3Gangs_3000Pods_1000PerGroup  5033, 2216, 8875   199, 451, 113     38 MiB
 *   6 x 1000  5000Nodes_6Gangs_6000Pods_1000PerGroup  5407, 6809, 4427   185, 147, 226     52 MiB
 *   9 x 1000  5000Nodes_9Gangs_9000Pods_1000PerGroup  6873, 6945, 6523   145, 144, 153     64 MiB
 *
 * (Beside them, the Coscheduling `gang --gangs 1000` ran at 5846 and 5443 pods/s, 0.51 and 0.55
 * ms per gang, at load 3.5. One PodGroup attempt is one PodGroup cycle: every member's
 * algorithm on the snapshot the previous ones changed, then Permit and the binding cycles.
 * Upstream reports about 3.7-5.7 ms per PodGroup attempt at 5000 nodes on its machines. Loading
 * the 1000-pod groups took 16 to 47 s before the loop began (the figure the bench prints as
 * "total incl. loading"), against 0.4 to 2 s for the groups of 3: the cost grows faster than
 * the members, outside the scheduling loop.)
 *
 * (The gang shape, measured on an idle machine, runs scheduler-plugins' Coscheduling
 * (examples/coscheduling) on the same pods;
 * upstream's GangScheduling workloads use the v1.37 Workload API and report about 3.7-5.7 ms per
 * PodGroup attempt at 5000 nodes. Per gang, ours is its three pods' cycles. The 1000-pod groups
 * cost what Coscheduling's design costs: every member counts its group's assigned pods.)
 *
 * dra, Release, 2026-12-02 13:26-13:27 UTC, 2 cores, idle (load average 0.6 to 1.0), after the
 * allocator set-up changes of 73d1d2f, 83fc4ba and 1d1da16, each `build-rel/tests/
 * bench_scheduling --shape dra [--nodes N --init-pods C --pods P] [--dra-variant V]` (in
 * brackets: 11:00-11:03 UTC, before them):
 *
 *   shape / variant      upstream workload (SchedulingWithResourceClaimTemplate/)
 *                                              threshold  kubesched pods/s      peak RSS
 *   dra                  5000pods_500nodes            56  592, 581 (242, 239)   90 MiB
 *   dra 200 / 1000 / 1000  2000pods_200nodes        none  1300 (635)            38 MiB
 *   dra selector         (burst; upstream's selector workloads are steady-state)
 *                                                   none  594 (226)             92 MiB
 *   dra match 500 / 0 / 1000  (burst; five devices per pod)  none  436 (154)    63 MiB
 *
 * Upstream's SteadyStateClusterResourceClaimTemplate (empty, half, full _500nodes, thresholds 64,
 * 60, 60) keeps 10 pods in flight, deleting and creating pods as they are scheduled, which
 * `simulate` cannot do. Approximated from a warm start: the cost of pods 11 to 110 on 500 nodes
 * with C devices already allocated (the mean of three runs each of --init-pods C --pods 10 and
 * --pods 110, the difference over 100 pods), 13:27 UTC, idle: C 0 (empty) 0.57 ms per pod,
 * about 1760 pods/s; C 2450 (half) 1.16 ms, about 860; C 4890 (the last 100 of the 5000
 * devices: full) 1.85 ms, about 540. The first 10 pods cost 2.8 to 5.2 ms each (the first
 * snapshot of 500 nodes, the selectors' first evaluations).
 *
 * dra/extendedresource (ExtendedResource, ExtendedResourceScoring), Release, 2026-12-02
 * 13:13-13:15 UTC (after main's allocator set-up changes, 83fc4ba and 1d1da16), 2 cores shared
 * (load average 1.6 to 2.2), each `build-rel/tests/bench_scheduling --shape dra --dra-variant V
 * [--classes C] [--nodes N --init-pods I --pods P]`, two runs for the 500-node workloads (once
 * more at 13:27 UTC, idle, after 1d1da16: 566, 518, 579 and 440 pods/s in the table's order):
 *
 *   variant / classes / N / I / P              upstream workload   threshold  pods/s    peak RSS
 *   extended 25 500 2500 2500       Explicit_25classes_5000pods_500nodes  120  559, 558  100 MiB
 *   extended 50 500 2500 2500       Explicit_50classes_5000pods_500nodes  130  544, 567  100 MiB
 *   extended-implicit 25 500 2500 2500  Implicit_25classes_5000pods_500nodes
 *                                                                          130  567, 562  101 MiB
 *   extended-scoring 20 500 0 5000  ExtendedResourceScoring/5000pods_500nodes
 *                                                                           70  409, 423   80 MiB
 *   extended 25 200 1000 1000       Explicit_25classes_2000pods_200nodes  none  1231       42 MiB
 *   extended 50 200 1000 1000       Explicit_50classes_2000pods_200nodes  none  1184       42 MiB
 *   extended-implicit 25 200 1000 1000                                    none  1240       42 MiB
 *   extended-scoring 10 200 0 2000  ExtendedResourceScoring/2000pods_200nodes  none  959  35 MiB
 *
 * (Per pod, as the dra shape: an allocator over the cluster's slices and allocated claims, and
 * per node the allocation of a one-request claim; the scoring variant also counts each node's
 * devices of the class in Score. Before main's allocator set-up changes, 12:54-12:57 UTC under
 * load 2.9 to 3.8: 148-264 pods/s for the three 500-node ExtendedResource workloads and 174-190
 * for the scoring one. Before deviceMatchesClass converted a device's attributes only for
 * selectors that read them, the 200-node scoring workload ran at 330 pods/s instead of 604, most
 * of it parsing every device's capacities. The claim-template dra shape, 200 / 1000 / 1000, is
 * unchanged by this work: 1053-1116 pods/s here against 1062-1072 for main at 83fc4ba.)
 *
 * (Before the set-up changes: about 4 ms per pod at 500 nodes, 8 us per node: each node's
 * Filter builds the allocator over that node's pool and the allocated devices, then runs the
 * class's CEL on each free device. Since: the claims' allocated devices gathered unsorted and
 * uncopied, pools hashed and ordered by node, each selector's result remembered per device on
 * its slice; 1.7 ms per pod. perf then, 200 / 1000 / 1000: strcmp 12%, strlen 6%, qsort 5%,
 * malloc/free about 12%, the
 * allocator's hash maps and its per-call device conversion (quantity parsing of each device's
 * capacities, 3%); CEL itself is small. After quantity()/semver() of literals were parsed once
 * at compile time, 11:08-11:09 UTC, load 1.5-1.6, old and new binaries side by side: selector
 * 280, 276 before, 277, 277 after, no measurable change here: a pod's allocation on a node
 * stops at the first free device, so each node evaluates the selector about once; in
 * `simulate` of tests/tools/gen-dra-cluster.py 500 8 2000 (a 40Gi selector that half the
 * devices fail), 5.91, 5.93 s before and 5.28, 5.33 s after.)
 *
 * (--isodemo, idle machine, `--shape basic --init-pods 0 --pods 2000 --nodes N --isodemo M`, ms
 * per pod in-process / isolated: 5000 nodes 0.14 / 2.57, 1000 nodes 0.11 / 1.86, 100 nodes
 * 0.13 / 0.92. At 5000 nodes the isolated IsoDemo filters 1000 nodes and scores 500 per pod:
 * 1.6 us per node evaluated, about 0.5 ms of the extra fixed per pod (the fork).)
 *
 * (The volume shapes' memory is the 20000 claims and volumes besides the pods. The three PV
 * shapes were measured again after NodeVolumeLimits resolved the pod's volumes once per cycle,
 * the store's lookups lost their snprintf and VolumeBinding's Filter its per-node callocs (load
 * 4 to 5): before, 624-940, 195-340 and 175-396 pods/s. What remains on top of their profile is
 * the host's per-lookup reference and hold of each storage object.)
 *
 * Prints pods/s of the scheduling loop, upstream's threshold when the sizes are its workload's,
 * and peak RSS; exits 1 when a measured pod was left unscheduled (a figure that counted refusals
 * would be wrong). Not a test (tests/CMakeLists.txt only runs every shape at upstream's
 * integration-test sizes as bench_smoke_*: 5 or 10 nodes, dra's fast workloads one node with the
 * driver and one without): run on demand, e.g.
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
    RESOURCE_SATURATION,
    IN_TREE_PVS,
    MIGRATED_IN_TREE_PVS,
    CSI_PVS,
    PREEMPTION_PVS,
    SECRETS,
    GANG,
    GANG_UPSTREAM,
    DRA
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
    [IN_TREE_PVS] = {"in-tree-pvs", "SchedulingInTreePVs", 5000, 1000, 2000},
    [MIGRATED_IN_TREE_PVS] = {"migrated-in-tree-pvs", "SchedulingMigratedInTreePVs", 5000, 5000,
                              5000},
    [CSI_PVS] = {"csi-pvs", "SchedulingCSIPVs", 5000, 5000, 5000},
    [PREEMPTION_PVS] = {"preemption-pvs", "PreemptionPVs", 1000, 4000, 1000},
    [SECRETS] = {"secrets", "SchedulingSecrets", 5000, 1000, 10000},
    [GANG] = {"gang", "GangScheduling", 5000, 0, 3000},
    [GANG_UPSTREAM] = {"gang-upstream", "GangScheduling", 5000, 0, 3000},
    [DRA] = {"dra", "SchedulingWithResourceClaimTemplate", 500, 2500, 2500},
};

/* Upstream's workloads of 1000 nodes and more (v1.37.2 performance-config.yaml files) with their
 * `threshold:` in pods/s, the least its CI accepts (0: the workload sets none). A run is compared
 * with one only when its sizes are the workload's. */
static const struct {
    shape sh;
    const char *workload;
    int nodes, init, pods, threshold;
    int per_gang; /* the gang shapes: pods per group (0: not a gang workload) */
} upstream_workloads[] = {
    {BASIC, "5000Nodes", 5000, 1000, 1000, 0, 0},
    {BASIC, "5000Nodes_10000Pods", 5000, 1000, 10000, 680, 0},
    {BASIC, "5000Nodes_50000Pods", 5000, 5000, 50000, 790, 0},
    {ANTI_AFFINITY, "5000Nodes", 5000, 1000, 1000, 0, 0},
    {ANTI_AFFINITY, "5000Nodes_2000Pods", 5000, 1000, 2000, 180, 0},
    {AFFINITY, "5000Nodes", 5000, 5000, 1000, 0, 0},
    {AFFINITY, "5000Nodes_5000Pods", 5000, 5000, 5000, 70, 0},
    {NODE_AFFINITY, "5000Nodes", 5000, 5000, 1000, 0, 0},
    {NODE_AFFINITY, "5000Nodes_10000Pods", 5000, 5000, 10000, 540, 0},
    {SPREADING, "5000Nodes", 5000, 5000, 2000, 0, 0},
    {SPREADING, "5000Nodes_5000Pods", 5000, 5000, 5000, 460, 0},
    {HOSTPORT_CONFLICT, "20000Nodes_20000Pods", 20000, 0, 20000, 0, 0},
    {RESOURCE_SATURATION, "20000Nodes_20000Pods", 20000, 0, 20000, 0, 0},
    {IN_TREE_PVS, "5000Nodes", 5000, 5000, 1000, 0, 0},
    {IN_TREE_PVS, "5000Nodes_2000Pods", 5000, 1000, 2000, 290, 0},
    {MIGRATED_IN_TREE_PVS, "5000Nodes", 5000, 5000, 1000, 0, 0},
    {MIGRATED_IN_TREE_PVS, "5000Nodes_5000Pods", 5000, 5000, 5000, 100, 0},
    {CSI_PVS, "5000Nodes", 5000, 5000, 1000, 0, 0},
    {CSI_PVS, "5000Nodes_5000Pods", 5000, 5000, 5000, 100, 0},
    {PREEMPTION_PVS, "1000Nodes", 1000, 4000, 1000, 0, 0},
    {SECRETS, "5000Nodes", 5000, 5000, 1000, 0, 0},
    {SECRETS, "5000Nodes_10000Pods", 5000, 1000, 10000, 790, 0},
    /* podgroup/gangscheduling/performance-config.yaml: no thresholds */
    {GANG_UPSTREAM, "5000Nodes_1000Gangs_3000Pods", 5000, 0, 3000, 0, 3},
    {GANG_UPSTREAM, "5000Nodes_2000Gangs_6000Pods", 5000, 0, 6000, 0, 3},
    {GANG_UPSTREAM, "5000Nodes_3000Gangs_9000Pods", 5000, 0, 9000, 0, 3},
    {GANG_UPSTREAM, "5000Nodes_3Gangs_3000Pods_1000PerGroup", 5000, 0, 3000, 0, 1000},
    {GANG_UPSTREAM, "5000Nodes_6Gangs_6000Pods_1000PerGroup", 5000, 0, 6000, 0, 1000},
    {GANG_UPSTREAM, "5000Nodes_9Gangs_9000Pods_1000PerGroup", 5000, 0, 9000, 0, 1000},
    {GANG_UPSTREAM, "5000Nodes_10Gangs_50000Pods_5000PerGroup", 5000, 0, 50000, 0, 5000},
    /* dra/performance-config.yaml (init: initClaims; both without nodes lacking DRA) */
    {DRA, "2000pods_200nodes", 200, 1000, 1000, 0, 0},
    {DRA, "5000pods_500nodes", 500, 2500, 2500, 56, 0},
};

static int volume_shape(shape sh)
{
    return sh == IN_TREE_PVS || sh == MIGRATED_IN_TREE_PVS || sh == CSI_PVS || sh == PREEMPTION_PVS;
}

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

/* --isodemo none|process: upstream's default profile plus the IsoDemo fixture plugin
 * (tests/loader/fixtures/isodemo.c: PreFilter, Filter, PreScore, Score, NormalizeScore) run
 * in-process or isolated in a child process (kubeschedIsolation), to measure what isolation
 * costs per pod and per node evaluated. */
static char isodemo_config[1024];
static const char *isodemo_isolation;
static int pods_per_gang = 3;

/* The gang shape's profile: upstream's defaults with Coscheduling (examples/coscheduling, built
 * as FIX_COSCHEDULING) at QueueSort, PreFilter, PostFilter, Permit and Reserve. */
static const char gang_config[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                  "kind: KubeSchedulerConfiguration\n"
                                  "profiles:\n"
                                  "- schedulerName: default-scheduler\n"
                                  "  plugins:\n"
                                  "    queueSort:\n"
                                  "      enabled: [{name: Coscheduling}]\n"
                                  "      disabled: [{name: \"*\"}]\n"
                                  "    preFilter: {enabled: [{name: Coscheduling}]}\n"
                                  "    postFilter: {enabled: [{name: Coscheduling}]}\n"
                                  "    permit: {enabled: [{name: Coscheduling}]}\n"
                                  "    reserve: {enabled: [{name: Coscheduling}]}\n"
                                  "  pluginConfig:\n"
                                  "  - name: Coscheduling\n"
                                  "    args: {kubeschedPluginPath: " FIX_COSCHEDULING "}\n";

/* upstream's podgroup/gangscheduling templates as scheduler-plugins writes them: PodGroup
 * gang-<g> with minMember = pods per group; pod i in gang-(i / pods per group). */
static void write_gang(FILE *f, int pods)
{
    int gangs = (pods + pods_per_gang - 1) / pods_per_gang;
    for (int g = 0; g < gangs; g++)
        fprintf(f,
                ",{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
                "\"metadata\":{\"name\":\"gang-%d\",\"namespace\":\"gang-ns-0\","
                "\"creationTimestamp\":\"2026-12-01T10:00:00Z\"},\"spec\":{\"minMember\":%d}}\n",
                g, pods_per_gang);
    for (int i = 0; i < pods; i++)
        fprintf(f,
                ",{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                "\"test-gang-scheduling-%d\",\"namespace\":\"gang-ns-0\",\"labels\":{"
                "\"scheduling.x-k8s.io/pod-group\":\"gang-%d\"}},\"spec\":{\"containers\":[{"
                "\"name\":\"pause\",\"image\":\"registry.k8s.io/pause:3.10.1\",\"resources\":{"
                "\"requests\":{\"cpu\":\"100m\",\"memory\":\"100Mi\"}}}]}}\n",
                i, i / pods_per_gang);
}

/* upstream's podgroup/gangscheduling templates as they are (v1.37.2): PodGroup gang-<g> of
 * scheduling.k8s.io/v1beta1 with the gang policy, minCount = pods per group; pod i names
 * gang-(i / pods per group) in spec.schedulingGroup.podGroupName. */
static void write_gang_upstream(FILE *f, int pods)
{
    int gangs = (pods + pods_per_gang - 1) / pods_per_gang;
    for (int g = 0; g < gangs; g++)
        fprintf(f,
                ",{\"apiVersion\":\"scheduling.k8s.io/v1beta1\",\"kind\":\"PodGroup\","
                "\"metadata\":{\"name\":\"gang-%d\",\"namespace\":\"gang-ns-0\"},\"spec\":{"
                "\"schedulingPolicy\":{\"gang\":{\"minCount\":%d}}}}\n",
                g, pods_per_gang);
    for (int i = 0; i < pods; i++)
        fprintf(f,
                ",{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                "\"test-gang-scheduling-%d\",\"namespace\":\"gang-ns-0\"},\"spec\":{"
                "\"schedulingGroup\":{\"podGroupName\":\"gang-%d\"},\"containers\":[{"
                "\"name\":\"pause\",\"image\":\"registry.k8s.io/pause:3.10.1\",\"resources\":{"
                "\"requests\":{\"cpu\":\"100m\",\"memory\":\"100Mi\"}}}]}}\n",
                i, i / pods_per_gang);
}

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
    case PREEMPTION_PVS:
        if (measured)
            *spec = "\"priority\":10,"; /* templates/pod-high-priority.yaml */
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

/* claim: the PersistentVolumeClaim the pod mounts as volume "vol" (upstream
 * CreatePodWithPersistentVolume), or NULL. Pods of the secrets shape mount secret "secret"
 * (templates/pod-with-secret-volume.yaml; the Secret need not exist for scheduling). */
static void write_pod(FILE *f, shape sh, const char *ns, const char *name, const char *node,
                      const char *claim)
{
    const char *labels, *spec;
    pod_parts(sh, node == NULL, &labels, &spec);
    /* PreemptionPVs: placed pods are pod-low-priority.yaml (900m, four fill a node), measured
     * ones pod-high-priority.yaml (3 CPU), each of which preempts three placed pods. */
    const char *cpu = sh != PREEMPTION_PVS ? "100m" : node ? "900m" : "3";
    fprintf(f,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
            "\"%s\","
            "\"uid\":\"%s-%s\",%s\"creationTimestamp\":null},\"spec\":{%s%s%s%s\"containers\":[{"
            "\"name\":\"pause\","
            "\"image\":\"registry.k8s.io/pause:3.10\",\"ports\":[{\"containerPort\":80}],"
            "\"resources\":{\"requests\":{\"cpu\":\"%s\",\"memory\":\"500Mi\"}}}]",
            name, ns, ns, name, labels, node ? "\"nodeName\":\"" : "", node ? node : "",
            node ? "\"," : "", spec, cpu);
    if (sh == SECRETS)
        fputs(",\"volumes\":[{\"name\":\"secret\",\"secret\":{\"secretName\":\"secret\"}}]", f);
    else if (claim)
        fprintf(
            f, ",\"volumes\":[{\"name\":\"vol\",\"persistentVolumeClaim\":{\"claimName\":\"%s\"}}]",
            claim);
    fputs("}}", f);
}

/*
 * The PersistentVolume and PersistentVolumeClaim of the i-th pod of namespace ns, as upstream's
 * CreatePodWithPersistentVolume makes them with bindVolume=true from templates/pvc.yaml and
 * pv-aws.yaml (in-tree shapes) or pv-csi.yaml (csi-pvs): claim "pvc-<i>" (ReadOnlyMany, 1Gi,
 * annotated pv.kubernetes.io/bind-completed, spec.volumeName set, status Bound, no storage class)
 * and volume "<ns>-vol-<i>" (ReadOnlyMany, 1Gi, Retain, claimRef to the claim without a uid,
 * status Bound). Upstream's quirk is kept: the AWS volumeID is "vol-<i>" without the namespace
 * (getCustomVolumeFactory sets it before the name is prefixed), so a placed pod and a measured pod
 * with the same index share a disk id; the CSI volumeHandle is the prefixed PV name.
 */
static void write_volume(FILE *f, shape sh, const char *ns, int i)
{
    fprintf(f,
            "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
            "\"pvc-%d\",\"namespace\":\"%s\",\"uid\":\"%s-pvc-%d\",\"annotations\":{"
            "\"pv.kubernetes.io/bind-completed\":\"true\"}},\"spec\":{\"accessModes\":["
            "\"ReadOnlyMany\"],\"resources\":{\"requests\":{\"storage\":\"1Gi\"}},"
            "\"volumeName\":\"%s-vol-%d\"},\"status\":{\"phase\":\"Bound\"}}\n",
            i, ns, ns, i, ns, i);
    fprintf(f,
            ",{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":"
            "\"%s-vol-%d\",\"uid\":\"%s-vol-%d\"},\"spec\":{\"accessModes\":[\"ReadOnlyMany\"],",
            ns, i, ns, i);
    if (sh == CSI_PVS)
        fprintf(f, "\"csi\":{\"driver\":\"ebs.csi.aws.com\",\"volumeHandle\":\"%s-vol-%d\"},", ns,
                i);
    else
        fprintf(f, "\"awsElasticBlockStore\":{\"volumeID\":\"vol-%d\"},", i);
    fprintf(f,
            "\"capacity\":{\"storage\":\"1Gi\"},\"persistentVolumeReclaimPolicy\":\"Retain\","
            "\"claimRef\":{\"kind\":\"PersistentVolumeClaim\",\"namespace\":\"%s\",\"name\":"
            "\"pvc-%d\",\"apiVersion\":\"v1\"}},\"status\":{\"phase\":\"Bound\"}}\n",
            ns, i);
}

/* The dra shape's variant: upstream's SchedulingWithResourceClaimTemplate workloads (""), its
 * "selector" ones (a CEL selector every device passes) and its "match" ones (five requests with
 * matchAttribute resource.kubernetes.io/pciRoot, so a pod takes half a node). */
static const char *dra_variant = "";
static int nodes_without_dra;
static int dra_classes = -1; /* --classes: the extended variants' DeviceClasses */

/* The extended-resource variants (dra/extendedresource/performance-config.yaml and its scoring/
 * sub-folder): "extended" (explicit example.com/gpu-<i> names), "extended-implicit"
 * (deviceclass.resource.kubernetes.io/test-class-<i>), "extended-scoring" (every class maps
 * example.com/gpu, NodeResourcesFit scores it). */
static int dra_extended(void) { return !strncmp(dra_variant, "extended", 8); }

/* Their workloads with a threshold or of 200+ nodes: variant, classes, nodes, init, pods. */
static const struct {
    const char *variant, *workload;
    int classes, nodes, init, pods, threshold;
} extended_workloads[] = {
    {"extended", "ExtendedResource/Explicit_25classes_2000pods_200nodes", 25, 200, 1000, 1000, 0},
    {"extended", "ExtendedResource/Explicit_25classes_5000pods_500nodes", 25, 500, 2500, 2500, 120},
    {"extended", "ExtendedResource/Explicit_50classes_2000pods_200nodes", 50, 200, 1000, 1000, 0},
    {"extended", "ExtendedResource/Explicit_50classes_5000pods_500nodes", 50, 500, 2500, 2500, 130},
    {"extended-implicit", "ExtendedResource/Implicit_25classes_2000pods_200nodes", 25, 200, 1000,
     1000, 0},
    {"extended-implicit", "ExtendedResource/Implicit_25classes_5000pods_500nodes", 25, 500, 2500,
     2500, 130},
    {"extended-scoring", "ExtendedResourceScoring/2000pods_200nodes", 10, 200, 0, 2000, 0},
    {"extended-scoring", "ExtendedResourceScoring/5000pods_500nodes", 20, 500, 0, 5000, 70},
};

/* dra/extendedresource/scoring/scheduler-config.yaml */
static const char extended_scoring_config[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                              "kind: KubeSchedulerConfiguration\n"
                                              "profiles:\n"
                                              "- schedulerName: default-scheduler\n"
                                              "  pluginConfig:\n"
                                              "  - name: NodeResourcesFit\n"
                                              "    args:\n"
                                              "      scoringStrategy:\n"
                                              "        type: LeastAllocated\n"
                                              "        resources:\n"
                                              "        - {name: cpu, weight: 1}\n"
                                              "        - {name: memory, weight: 1}\n"
                                              "        - {name: example.com/gpu, weight: 1}\n";

#define DRA_DRIVER "test-driver.cdi.k8s.io"

/* templates/resourceclaimtemplate.yaml's spec.spec (resourceclaim.yaml's spec for the initial
 * claims: one request, no selector) */
static void write_dra_claim_spec(FILE *f, int templated)
{
    int match = templated && !strcmp(dra_variant, "match");
    int nreq = match ? 5 : 1;
    fputs("\"spec\":{\"devices\":{", f);
    if (match)
        fputs("\"constraints\":[{\"matchAttribute\":\"resource.kubernetes.io/pciRoot\"}],", f);
    fputs("\"requests\":[", f);
    for (int r = 0; r < nreq; r++) {
        fprintf(f, "%s{\"name\":\"req-%d\",\"exactly\":{\"deviceClassName\":\"test-class\"",
                r ? "," : "", r);
        if (templated && !strcmp(dra_variant, "selector"))
            fputs(",\"selectors\":[{\"cel\":{\"expression\":\"device.attributes[\\\"" DRA_DRIVER
                  "\\\"].driverVersion.major() >= 1 && device.capacity[\\\"" DRA_DRIVER
                  "\\\"].memory.isGreaterThan(quantity(\\\"1Mi\\\"))\"}}]",
                  f);
        fputs("}}", f);
    }
    fputs("]}}", f);
}

/* A generateName suffix (apimachinery's 5 characters of "bcdfghjklmnpqrstvwxz2456789"), made
 * from i so that names are stable from run to run. */
static void name_suffix(char out[6], unsigned i)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned x = i * 2654435761u + 12345u;
    for (int k = 0; k < 5; k++) {
        out[k] = alphabet[x % 27];
        x /= 27;
    }
    out[5] = '\0';
}

/* The extended resource a pod of index i requests (pod-with-extended-resource.yaml: .class-<i mod
 * classes>; the scoring template: example.com/gpu). */
static void extended_resource_of(char *out, size_t n, int i)
{
    if (!strcmp(dra_variant, "extended-scoring"))
        snprintf(out, n, "example.com/gpu");
    else if (!strcmp(dra_variant, "extended-implicit"))
        snprintf(out, n, "deviceclass.resource.kubernetes.io/test-class-%d", i % dra_classes);
    else
        snprintf(out, n, "example.com/gpu-%d", i % dra_classes);
}

/*
 * dra/extendedresource/performance-config.yaml (ExtendedResource) and scoring/ (ExtendedResource
 * Scoring), v1.37.2, after write_dra's nodes and slices: the DeviceClasses
 * (deviceclass-extended-resource.yaml: test-class-<i>, device.driver == the driver, and for the
 * explicit variant extendedResourceName example.com/gpu-<i>; deviceclass-extended-resource-
 * scoring.yaml: scoring-test-class-<i>, all naming example.com/gpu), the init pods in namespace
 * init and the measured pods in namespace test (pod-with-extended-resource.yaml: one container
 * requesting 1 of the variant's resource). Upstream's scheduler places the init pods before the
 * measurement; here each is written bound, with the claim its PreBind would have made: allocated
 * on a node picked at random among those with a free device (its first free device), reserved
 * for the pod. Returns the number of objects written.
 */
static long write_dra_extended(FILE *f, int nodes, int init_pods, int pods, uint64_t seed)
{
    long objects = 0;
    int scoring = !strcmp(dra_variant, "extended-scoring");
    for (int c = 0; c < dra_classes; c++, objects++) {
        fprintf(f,
                ",{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":"
                "{\"name\":\"%stest-class-%d\"},\"spec\":{\"selectors\":[{\"cel\":{"
                "\"expression\":\"device.driver == \\\"" DRA_DRIVER "\\\"\"}}]",
                scoring ? "scoring-" : "", c);
        if (scoring)
            fputs(",\"extendedResourceName\":\"example.com/gpu\"", f);
        else if (!strcmp(dra_variant, "extended"))
            fprintf(f, ",\"extendedResourceName\":\"example.com/gpu-%d\"", c);
        fputs("}}\n", f);
    }
    int *free_nodes = malloc(sizeof(int) * (size_t)(nodes ? nodes : 1));
    int *used = calloc((size_t)(nodes ? nodes : 1), sizeof(int));
    int nfree = nodes;
    for (int n = 0; n < nodes; n++)
        free_nodes[n] = n;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    char res[128], sfx[6];
    for (int i = 0; i < init_pods && nfree > 0; i++, objects += 2) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int k = (int)(x % (uint64_t)nfree), n = free_nodes[k];
        extended_resource_of(res, sizeof(res), i);
        name_suffix(sfx, (unsigned)i);
        fprintf(f,
                ",{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{"
                "\"name\":\"test-dra-%d-extended-resources-%s\",\"generateName\":"
                "\"test-dra-%d-extended-resources-\",\"namespace\":\"init\",\"uid\":"
                "\"init-ext-%d\",\"annotations\":{\"resource.kubernetes.io/"
                "extended-resource-claim\":\"true\"},\"ownerReferences\":[{\"apiVersion\":\"v1\","
                "\"kind\":\"Pod\",\"name\":\"test-dra-%d\",\"uid\":\"init-test-dra-%d\","
                "\"controller\":true}],\"finalizers\":[\"resource.kubernetes.io/"
                "delete-protection\"]},\"spec\":{\"devices\":{\"requests\":[{\"name\":"
                "\"container-0-request-0\",\"exactly\":{\"deviceClassName\":\"%stest-class-%d\","
                "\"allocationMode\":\"ExactCount\",\"count\":1}}]}},\"status\":{\"allocation\":{"
                "\"devices\":{\"results\":[{\"request\":\"container-0-request-0\",\"driver\":"
                "\"" DRA_DRIVER
                "\",\"pool\":\"resourceslice-%d\",\"device\":\"basic-device-%d\"}]},"
                "\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":"
                "\"metadata.name\",\"operator\":\"In\",\"values\":[\"scheduler-perf-dra-%d\"]}]}"
                "]}},\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"test-dra-%d\",\"uid\":"
                "\"init-test-dra-%d\"}]}}\n",
                i, sfx, i, i, i, i, scoring ? "scoring-" : "", scoring ? 0 : i % dra_classes, n,
                used[n], n, i, i);
        fprintf(f,
                ",{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"test-dra-%d\","
                "\"namespace\":\"init\",\"uid\":\"init-test-dra-%d\"},\"spec\":{\"nodeName\":"
                "\"scheduler-perf-dra-%d\",\"containers\":[{\"image\":\"registry.k8s.io/"
                "pause:3.9\",\"name\":\"pause\",\"resources\":{\"requests\":{\"%s\":\"1\"},"
                "\"limits\":{\"%s\":\"1\"}}}]},\"status\":{\"extendedResourceClaimStatus\":{"
                "\"requestMappings\":[{\"containerName\":\"pause\",\"resourceName\":\"%s\","
                "\"requestName\":\"container-0-request-0\"}],\"resourceClaimName\":"
                "\"test-dra-%d-extended-resources-%s\"}}}\n",
                i, i, n, res, res, res, i, sfx);
        if (++used[n] == 10)
            free_nodes[k] = free_nodes[--nfree];
    }
    free(free_nodes);
    free(used);
    for (int i = 0; i < pods; i++, objects++) {
        extended_resource_of(res, sizeof(res), i);
        fprintf(f,
                ",{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                "\"%s-%d\",\"namespace\":\"test\",\"uid\":\"test-%d\"},\"spec\":{\"containers\":"
                "[{\"image\":\"registry.k8s.io/pause:3.9\",\"name\":\"pause\",\"resources\":{"
                "\"requests\":{\"%s\":\"1\"},\"limits\":{\"%s\":\"1\"}}}]}}\n",
                scoring ? "scoring-test-pod" : "test-dra", i, i, res, res);
    }
    return objects;
}

/*
 * upstream's SchedulingWithResourceClaimTemplate (dra/performance-config.yaml and its templates,
 * v1.37.2): nodes_without_dra nodes of the default template, nodes scheduler-perf-dra-<i>
 * (node-with-dra-test-driver.yaml: 4 CPU, 32Gi, 110 pods, label node-with-dra) each with
 * ResourceSlice resourceslice-<i> of driver test-driver.cdi.k8s.io, pool resourceslice-<i>, 10
 * devices basic-device-<d> (resourceslice-basic-devices.yaml's attributes, numPCIRoots 2),
 * DeviceClass test-class (device.driver == "test-driver.cdi.k8s.io"), init_claims claims
 * test-claim-<i> in namespace init allocated as upstream's allocResourceClaims op does (one at a
 * time on a node picked at random among those with a free device, the node's first free device,
 * nodeSelector on the node's name, reserved for no one), then the measured pods of
 * pod-with-claim-template.yaml in namespace test. Upstream's kube-controller-manager makes each
 * pod's claim from ResourceClaimTemplate test-claim-template; here the claims are written as it
 * writes them: one per pod, named <pod>-<podClaimName>-<5 characters> (generateName), annotated
 * resource.kubernetes.io/pod-claim-name, owned by the pod (controller: true), with the template's
 * spec, and the pod's status.resourceClaimStatuses naming it. The template itself is not written
 * (the scheduler does not read it). Returns the number of objects written.
 */
static long write_dra(FILE *f, int nodes, int init_claims, int pods, uint64_t seed)
{
    long objects = 0;
    fputs(",{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"init\"}}\n"
          ",{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"test\"}}\n",
          f);
    for (int i = 0; i < nodes_without_dra; i++, objects++) /* config/node-default.yaml */
        fprintf(
            f,
            ",{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"sample-node-%d\"},"
            "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"32Gi\",\"pods\":\"110\"},"
            "\"capacity\":{\"cpu\":\"4\",\"memory\":\"32Gi\",\"pods\":\"110\"}}}\n",
            i);
    for (int i = 0; i < nodes; i++) {
        /* the API server defaults allocatable to capacity */
        fprintf(f,
                ",{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
                "\"scheduler-perf-dra-%d\",\"labels\":{\"node-with-dra\":\"true\"}},\"spec\":{},"
                "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"32Gi\",\"pods\":\"110\"},"
                "\"capacity\":{\"cpu\":\"4\",\"memory\":\"32Gi\",\"pods\":\"110\"},\"conditions\":"
                "[{\"status\":\"True\",\"type\":\"Ready\"}],\"phase\":\"Running\"}}\n",
                i);
        fprintf(f,
                ",{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{"
                "\"name\":\"resourceslice-%d\"},\"spec\":{\"pool\":{\"name\":\"resourceslice-%d\","
                "\"generation\":1,\"resourceSliceCount\":1},\"driver\":\"" DRA_DRIVER "\","
                "\"nodeName\":\"scheduler-perf-dra-%d\",\"devices\":[",
                i, i, i);
        for (int d = 0; d < 10; d++)
            fprintf(
                f,
                "%s{\"name\":\"basic-device-%d\",\"attributes\":{\"driver\":{\"string\":\"xe\"},"
                "\"driverVersion\":{\"version\":\"1.2.3\"},\"resource.k8s.io/pciRoot\":{"
                "\"string\":\"%d\"},\"family\":{\"string\":\"Arc Pro B-Series\"},\"health\":{"
                "\"string\":\"Healthy\"},\"model\":{\"string\":\"B60\"},\"pciAddress\":{"
                "\"string\":\"0000:0%d:00.0\"},\"pciId\":{\"string\":\"0xe211\"},\"pciRoot\":{"
                "\"string\":\"0%d\"},\"resource.kubernetes.io/pciBusID\":{\"string\":"
                "\"0000:0%d:00.0\"},\"resource.kubernetes.io/pciRoot\":{\"string\":"
                "\"pci0000:0%d\"},\"sriov\":{\"bool\":true},\"type\":{\"string\":\"gpu\"}},"
                "\"capacity\":{\"memory\":{\"value\":\"24480Mi\"},\"millicores\":{\"value\":"
                "\"1k\"}}}",
                d ? "," : "", d, d % 2, d, d % 2, d, d % 2);
        fputs("]}}\n", f);
        objects += 2;
    }
    if (dra_extended())
        return objects + write_dra_extended(f, nodes, init_claims, pods, seed);
    fputs(",{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":"
          "\"test-class\"},\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == "
          "\\\"" DRA_DRIVER "\\\"\"}}]}}\n",
          f);
    objects++;
    /* allocResourceClaims: free[k] lists the nodes with a free device, used[n] counts node n's */
    int *free_nodes = malloc(sizeof(int) * (size_t)(nodes ? nodes : 1));
    int *used = calloc((size_t)(nodes ? nodes : 1), sizeof(int));
    int nfree = nodes;
    for (int n = 0; n < nodes; n++)
        free_nodes[n] = n;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < init_claims; i++, objects++) {
        fprintf(
            f,
            ",{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{"
            "\"name\":\"test-claim-%d\",\"namespace\":\"init\",\"uid\":\"init-test-claim-%d\"},",
            i, i);
        write_dra_claim_spec(f, 0);
        if (nfree == 0) { /* upstream fails the workload; the bench reports the pods left */
            fputs("}\n", f);
            continue;
        }
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int k = (int)(x % (uint64_t)nfree), n = free_nodes[k];
        fprintf(f,
                ",\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"req-0\","
                "\"driver\":\"" DRA_DRIVER "\",\"pool\":\"resourceslice-%d\",\"device\":"
                "\"basic-device-%d\"}]},\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":"
                "[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":["
                "\"scheduler-perf-dra-%d\"]}]}]}}}}\n",
                n, used[n], n);
        if (++used[n] == 10)
            free_nodes[k] = free_nodes[--nfree];
    }
    free(free_nodes);
    free(used);
    for (int i = 0; i < pods; i++, objects += 2) {
        char sfx[6];
        name_suffix(sfx, (unsigned)i);
        /* generateName test-dra: the suffix is the pod's index here */
        fprintf(f,
                ",{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{"
                "\"name\":\"test-dra-%d-resource-%s\",\"namespace\":\"test\",\"uid\":"
                "\"test-dra-%d-resource-%s\",\"annotations\":{"
                "\"resource.kubernetes.io/pod-claim-name\":\"resource\"},\"ownerReferences\":[{"
                "\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"test-dra-%d\",\"uid\":"
                "\"test-test-dra-%d\",\"controller\":true,\"blockOwnerDeletion\":true}]},",
                i, sfx, i, sfx, i, i);
        write_dra_claim_spec(f, 1);
        fprintf(
            f,
            "}\n,{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"test-dra-%d\","
            "\"namespace\":\"test\",\"uid\":\"test-test-dra-%d\"},\"spec\":{\"containers\":[{"
            "\"image\":\"registry.k8s.io/pause:3.10.1\",\"name\":\"pause\",\"resources\":{"
            "\"claims\":[{\"name\":\"resource\"}]}}],\"resourceClaims\":[{\"name\":"
            "\"resource\",\"resourceClaimTemplateName\":\"test-claim-template\"}]},\"status\":{"
            "\"resourceClaimStatuses\":[{\"name\":\"resource\",\"resourceClaimName\":"
            "\"test-dra-%d-resource-%s\"}]}}\n",
            i, i, i, sfx);
    }
    return objects;
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
                        "topology-spreading, hostport-conflict, resource-saturation, in-tree-pvs, "
                        "migrated-in-tree-pvs, csi-pvs, preemption-pvs, secrets, gang, "
                        "gang-upstream, dra)\n",
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
        else if (!strcmp(argv[i], "--pods-per-gang"))
            pods_per_gang = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
        else if (!strcmp(argv[i], "--gangs"))
            pods = -2 - atoi(argv[i + 1]); /* resolved below, once pods per gang is known */
        else if (!strcmp(argv[i], "--classes"))
            dra_classes = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
        else if (!strcmp(argv[i], "--nodes-without-dra"))
            nodes_without_dra = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--dra-variant")) {
            dra_variant = argv[i + 1];
            if (strcmp(dra_variant, "selector") && strcmp(dra_variant, "match") &&
                strcmp(dra_variant, "basic") && strcmp(dra_variant, "extended") &&
                strcmp(dra_variant, "extended-implicit") &&
                strcmp(dra_variant, "extended-scoring")) {
                fprintf(stderr,
                        "bench: unknown --dra-variant %s (basic, selector, match, extended, "
                        "extended-implicit, extended-scoring)\n",
                        dra_variant);
                return 2;
            }
            if (!strcmp(dra_variant, "basic"))
                dra_variant = "";
        } else if (!strcmp(argv[i], "--batch-size"))
            batch_size = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
        else if (!strcmp(argv[i], "--isodemo")) {
            isodemo_isolation = argv[i + 1];
            snprintf(isodemo_config, sizeof(isodemo_config),
                     "apiVersion: kubescheduler.config.k8s.io/v1\n"
                     "kind: KubeSchedulerConfiguration\n"
                     "profiles:\n"
                     "- schedulerName: default-scheduler\n"
                     "  plugins: {multiPoint: {enabled: [{name: IsoDemo}]}}\n"
                     "  pluginConfig:\n"
                     "  - name: IsoDemo\n"
                     "    args: {kubeschedPluginPath: %s, kubeschedIsolation: %s, pickyEvery: "
                     "1000000}\n",
                     FIX_ISODEMO, isodemo_isolation);
        } else if (!strcmp(argv[i], "--feature-gates")) {
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
    if (pods < -1)
        pods = (-2 - pods) * pods_per_gang; /* --gangs */
    else if (pods < 0)
        pods = shapes[sh].pods;
    if (dra_classes < 0) /* the 500-node workloads' */
        dra_classes = !strcmp(dra_variant, "extended-scoring") ? 20 : 25;
    char path[] = "/tmp/kubesched-bench-XXXXXX.json";
    int fd = mkstemps(path, 5);
    if (fd < 0) {
        perror("mkstemps");
        return 1;
    }
    FILE *f = fdopen(fd, "w");
    fputs("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n", f);
    char name[64], node[64], claim[64];
    fputs("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"sched-0\"}},\n"
          "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"sched-1\"}}\n",
          f);
    /* Migrated and CSI shapes: upstream's NodeAllocatableStrategy (node allocatable
     * attachable-volumes-csi-ebs.csi.aws.com 39 and a CSINode with the ebs.csi.aws.com driver,
     * allocatable count 39, annotated with the migrated plugins: kubernetes.io/aws-ebs or none). */
    int limits = sh == MIGRATED_IN_TREE_PVS || sh == CSI_PVS;
    long objects = nodes + init_pods + pods; /* plus the storage objects, counted below */
    if (sh == DRA) /* its own nodes, slices, class, claims (init-pods: initClaims) and pods */
        objects = write_dra(f, nodes, init_pods, pods, seed);
    for (int i = 0; i < nodes && sh != DRA; i++) {
        const char *zone = zone_of(sh, i);
        fprintf(f,
                ",{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%d\","
                "\"labels\":"
                "{\"kubernetes.io/"
                "hostname\":\"node-%d\"%s%s%s}},\"status\":{\"allocatable\":{\"cpu\":\"4\","
                "\"memory\":\"32Gi\",\"pods\":\"110\"%s},\"capacity\":{\"cpu\":\"4\",\"memory\":"
                "\"32Gi\",\"pods\":\"110\"}}}\n",
                i, i, zone ? ",\"topology.kubernetes.io/zone\":\"" : "", zone ? zone : "",
                zone ? "\"" : "",
                limits ? ",\"attachable-volumes-csi-ebs.csi.aws.com\":\"39\"" : "");
        objects += limits;
        if (limits)
            fprintf(
                f,
                ",{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSINode\",\"metadata\":{"
                "\"name\":\"node-%d\",\"annotations\":{\"storage.alpha.kubernetes.io/"
                "migrated-plugins\":\"%s\"}},\"spec\":{\"drivers\":[{\"name\":\"ebs.csi.aws.com\","
                "\"nodeID\":\"node-%d\",\"allocatable\":{\"count\":39}}]}}\n",
                i, sh == MIGRATED_IN_TREE_PVS ? "kubernetes.io/aws-ebs" : "", i);
    }
    for (int i = 0; i < init_pods && sh != DRA; i++) {
        snprintf(name, sizeof(name), "init-pod-%d", i);
        snprintf(node, sizeof(node), "node-%d", i % nodes);
        snprintf(claim, sizeof(claim), "pvc-%d", i);
        /* PreemptionPVs' placed pods mount nothing */
        int vol = volume_shape(sh) && sh != PREEMPTION_PVS;
        fputc(',', f);
        if (vol) {
            objects += 2;
            write_volume(f, sh, "sched-0", i);
            fputc(',', f);
        }
        write_pod(f, sh, "sched-0", name, node, vol ? claim : NULL);
        fputc('\n', f);
    }
    int gang_shape = sh == GANG || sh == GANG_UPSTREAM;
    if (gang_shape) {
        fputs(",{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
              "\"gang-ns-0\"}}\n",
              f);
        if (sh == GANG)
            write_gang(f, pods);
        else
            write_gang_upstream(f, pods);
        objects += (pods + pods_per_gang - 1) / pods_per_gang;
    }
    for (int i = 0; i < pods && !gang_shape && sh != DRA; i++) {
        snprintf(name, sizeof(name), "pod-%d", i);
        snprintf(claim, sizeof(claim), "pvc-%d", i);
        fputc(',', f);
        if (batching_shape)
            write_batching_pod(f, sh, i);
        else {
            if (volume_shape(sh)) {
                objects += 2;
                write_volume(f, sh, "sched-1", i);
                fputc(',', f);
            }
            write_pod(f, sh, "sched-1", name, NULL, volume_shape(sh) ? claim : NULL);
        }
        fputc('\n', f);
    }
    fputs("]}\n", f);
    fclose(f);

    /* upstream's GangScheduling workloads run with featureGates GenericWorkload: true (which also
     * appends GangScheduling to the default profile) */
    if (sh == GANG_UPSTREAM) {
        char gerr[256];
        if (ks__feature_gates_set("GenericWorkload=true", gerr, sizeof(gerr)) != 0) {
            fprintf(stderr, "bench: %s\n", gerr);
            unlink(path);
            return 1;
        }
    }
    ks__host_init();
    char err[1024] = "";
    ks_config *cfg = NULL;
    ks_registry *reg = ks__registry_new();
    ks_profile_plan *plans = NULL;
    ks_loaded_module **mods = NULL;
    if (!reg ||
        ks__loader_register_linked(reg, &ks_in_tree_module, KS_IN_TREE_ORIGIN, ks__host_api(), err,
                                   sizeof(err)) != 0 ||
        (batching_shape
             ? ks__config_load_string(reg, no_topology_config, "scheduler-config-no-topology.yaml",
                                      &cfg, err, sizeof(err))
         : sh == GANG
             ? ks__config_load_string(reg, gang_config, "gang.yaml", &cfg, err, sizeof(err))
         : sh == DRA && !strcmp(dra_variant, "extended-scoring")
             ? ks__config_load_string(reg, extended_scoring_config, "scheduler-config.yaml", &cfg,
                                      err, sizeof(err))
         : isodemo_isolation
             ? ks__config_load_string(reg, isodemo_config, "isodemo.yaml", &cfg, err, sizeof(err))
             : ks__config_default(reg, &cfg, err, sizeof(err))) != 0 ||
        ks__loader_load_config_plugins(cfg, reg, ks__host_api(), &mods, err, sizeof(err)) != 0 ||
        ks__config_check_plugin_args(cfg, reg, err, sizeof(err)) != 0 ||
        ks__config_plan(cfg, reg, &plans, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench: %s\n", err);
        unlink(path);
        return 1;
    }
    if (parallelism > 0)
        cfg->parallelism = parallelism;
    ks_simulate_opts o = {path, cfg, plans, KS_OUTPUT_NONE, 0, seed, stdout, 0, NULL, 0};
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
    const char *upstream_name = shapes[sh].upstream;
    if (sh == DRA && dra_extended())
        upstream_name = strcmp(dra_variant, "extended-scoring") ? "ExtendedResource"
                                                                : "ExtendedResourceScoring";
    printf("%s nodes=%d init-pods=%d pods=%d parallelism=%d OpportunisticBatching=%s",
           upstream_name, nodes, init_pods, pods, cfg->parallelism,
           ks__feature_enabled(KS_FEATURE_OPPORTUNISTIC_BATCHING) ? "true" : "false");
    if (batching_shape)
        printf(" batch-size=%d", batch_size);
    if (isodemo_isolation)
        printf(" IsoDemo=%s", isodemo_isolation);
    if (sh == DRA)
        printf(" %s=%d nodesWithoutDRA=%d variant=%s", dra_extended() ? "initPods" : "initClaims",
               init_pods, nodes_without_dra, *dra_variant ? dra_variant : "basic");
    if (sh == DRA && dra_extended())
        printf(" classes=%d", dra_classes);
    printf("\n");
    printf("  scheduled %zu, unschedulable %zu, errors %zu", st.scheduled, st.unschedulable,
           st.errors);
    if (st.preemptions) /* attempts that nominated a node and evicted victims, then retried */
        printf(", preemptions %zu", st.preemptions);
    printf("\n");
    printf("  scheduling loop: %.3f s, %.0f pods/s\n", st.seconds,
           (double)st.scheduled / st.seconds);
    if (sh == GANG) /* upstream reports its PodGroup attempts in ms (3.7-5.7 at 5000 nodes) */
        printf("  %d gangs of %d: %.3f ms per gang (its pods' attempts, Permit waits included)\n",
               pods / pods_per_gang, pods_per_gang,
               st.seconds * 1e3 / (double)(pods / pods_per_gang));
    if (sh == GANG_UPSTREAM) /* upstream's PodGroup scheduling attempts, in ms */
        printf("  %d gangs of %d: %zu PodGroup attempts, %.3f ms per PodGroup attempt (the "
               "scheduling loop over them, binding included)\n",
               pods / pods_per_gang, pods_per_gang, st.podgroup_attempts,
               st.podgroup_attempts ? st.seconds * 1e3 / (double)st.podgroup_attempts : 0.0);
    /* upstream's figure only compares at its workload's sizes */
    int matched = 0;
    for (size_t k = 0; k < sizeof(upstream_workloads) / sizeof(upstream_workloads[0]); k++) {
        if (upstream_workloads[k].sh != sh || upstream_workloads[k].nodes != nodes ||
            upstream_workloads[k].init != init_pods || upstream_workloads[k].pods != pods ||
            (upstream_workloads[k].per_gang && upstream_workloads[k].per_gang != pods_per_gang) ||
            (sh == DRA && (*dra_variant || nodes_without_dra)))
            continue;
        matched = 1;
        if (upstream_workloads[k].threshold)
            printf("  upstream threshold (%s/%s): %d pods/s\n", shapes[sh].upstream,
                   upstream_workloads[k].workload, upstream_workloads[k].threshold);
        else
            printf("  upstream threshold: none (%s/%s sets none)\n", shapes[sh].upstream,
                   upstream_workloads[k].workload);
    }
    for (size_t k = 0; sh == DRA && dra_extended() && !nodes_without_dra &&
                       k < sizeof(extended_workloads) / sizeof(extended_workloads[0]);
         k++) {
        if (strcmp(extended_workloads[k].variant, dra_variant) ||
            extended_workloads[k].classes != dra_classes || extended_workloads[k].nodes != nodes ||
            extended_workloads[k].init != init_pods || extended_workloads[k].pods != pods)
            continue;
        matched = 1;
        if (extended_workloads[k].threshold)
            printf("  upstream threshold (%s): %d pods/s\n", extended_workloads[k].workload,
                   extended_workloads[k].threshold);
        else
            printf("  upstream threshold: none (%s sets none)\n", extended_workloads[k].workload);
    }
    if (!matched)
        printf("  upstream threshold: none (no %s workload of 1000+ nodes has these sizes)\n",
               upstream_name);
    printf("  total incl. loading the %ld objects: %.3f s\n", objects, total);
    printf("  peak RSS: %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
    ks__config_plans_free(plans, cfg->nprofiles);
    ks__config_free(cfg);
    ks__registry_free(reg);
    ks__loader_close_all(mods);
    /* A bench that measured refusals would be wrong: every measured pod must be placed. */
    if (st.scheduled != (size_t)pods) {
        fprintf(stderr, "bench: FAIL: %zu of %d measured pods were not scheduled\n",
                (size_t)pods - st.scheduled, pods);
        return 1;
    }
    return 0;
}
