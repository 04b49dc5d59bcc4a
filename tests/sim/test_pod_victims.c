/*
 * DefaultPreemption for a single pod in `simulate` with GenericWorkload on (v1.37.2): the
 * victims are preemption units (upstream preemption.DomainVictim): one pod, or every pod on the
 * snapshot's nodes of a PodGroup whose disruptionMode is `all`, which leave together, ranked with
 * their PodGroup's priority by MoreImportantVictim. The cases are upstream's
 * TestSelectVictimsOnNode "Workload Aware" and "Cross-node PodGroup" ones
 * (plugins/defaultpreemption/default_preemption_test.go) with their small/medium/large requests
 * turned into CPU (every node's capacity is its CPU count), plus a few that pin down what the
 * port adds: the group's priority over its pods', the disruption mode `single`, PDB violations
 * counted per pod of a unit, and the unchanged behaviour with the gate off.
 */
#include <criterion/criterion.h>

#include "simrun.h"

#define GATE "--feature-gates GenericWorkload=true "
#define LOW "10"
#define MID "100"
#define HIGH "1000"
#define VERYHIGH "2000"

static cJSON *run_with(const char *gates, const char *cluster)
{
    char path[32], args[256];
    strcpy(path, "/tmp/ks-podv-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(cluster, f);
    fclose(f);
    snprintf(args, sizeof(args), "%s--max-attempts 10 --cluster %s", gates, path);
    cJSON *doc = sim_json(args);
    unlink(path);
    return doc;
}

#define NODE(name, cpu)                                                                            \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name                                      \
    ", labels: {kubernetes.io/hostname: " name "}}\n"                                              \
    "status: {allocatable: {cpu: \"" cpu "\", memory: 64Gi, pods: \"110\"}}\n"
/* a pod bound to node asking for cpu; extra: more of spec (IN(group)) */
#define BOUND(name, node, prio, cpu, labels, extra)                                                \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name                                       \
    ", namespace: default, labels: {" labels "}}\nspec:\n  nodeName: " node "\n  priority: " prio  \
    "\n  " extra "\n"                                                                              \
    "  containers: [{name: c, image: x, resources: {requests: {cpu: \"" cpu "\"}}}]\n"
#define IN(group) "schedulingGroup: {podGroupName: " group "}"
#define GROUPMODE(name, prio, mode)                                                                \
    "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " name           \
    ", namespace: default, uid: uid-" name "}\nspec: {priority: " prio ", disruptionMode: {" mode  \
    ": {}}, schedulingPolicy: {basic: {}}}\n"
#define GROUPALL(name, prio) GROUPMODE(name, prio, "all")
#define GROUPSINGLE(name, prio) GROUPMODE(name, prio, "single")
/* the preemptor: a lone pod (no group), so it goes through the pod PostFilter */
#define PREEMPTOR(prio, cpu)                                                                       \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"             \
    "  priority: " prio "\n"                                                                       \
    "  containers: [{name: c, image: x, resources: {requests: {cpu: \"" cpu "\"}}}]\n"
#define PDB_FOO_0                                                                                  \
    "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: foo, namespace: "     \
    "default}\nspec: {selector: {matchLabels: {app: foo}}}\nstatus: {disruptionsAllowed: 0}\n"

/* The preemptor's victims (its first attempt that has some), sorted and joined with ",", and the
 * node it was finally scheduled on ("" when it was not). */
static void outcome(const cJSON *doc, char *victims, size_t len, char *node, size_t nlen)
{
    const char *names[32];
    int n = 0;
    const cJSON *it;
    victims[0] = node[0] = '\0';
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "pods"))
    {
        if (strcmp(sim_field(it, "name"), "p") != 0)
            continue;
        if (!strcmp(sim_field(it, "result"), "Scheduled"))
            snprintf(node, nlen, "%s", sim_field(it, "node"));
        const cJSON *v = cJSON_GetObjectItem(it, "victims"), *x;
        if (n || !cJSON_IsArray(v))
            continue;
        cJSON_ArrayForEach(x, v)
        {
            if (n < 32)
                names[n++] = sim_field(x, "name");
        }
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(names[j], names[j - 1]) < 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (int i = 0; i < n; i++) {
        size_t l = strlen(victims);
        snprintf(victims + l, len - l, "%s%s", i ? "," : "", names[i]);
    }
}

/* want_node NULL: any node, as long as the preemptor is scheduled */
static void expect_gated(const char *gates, const char *cluster, const char *want,
                         const char *want_node)
{
    cJSON *doc = run_with(gates, cluster);
    char got[512], node[128];
    outcome(doc, got, sizeof(got), node, sizeof(node));
    cr_expect_str_eq(got, want);
    cr_expect_neq(node[0], '\0', "the preemptor is scheduled after the preemption");
    if (want_node)
        cr_expect_str_eq(node, want_node);
    cJSON_Delete(doc);
}

static void expect(const char *cluster, const char *want, const char *want_node)
{
    expect_gated(GATE, cluster, want, want_node);
}

/* ---- upstream TestSelectVictimsOnNode, Workload Aware -------------------------------------- */

Test(pod_victims, workload_aware_atomic_preemption_of_pod_group)
{
    /* g1-1 alone would make room; disruptionMode all takes g1-2 with it */
    expect(NODE("node1", "2") BOUND("g1-1", "node1", LOW, "1", "", IN("pg1"))
               BOUND("g1-2", "node1", LOW, "1", "", IN("pg1")) GROUPALL("pg1", LOW)
                   PREEMPTOR(HIGH, "1"),
           "g1-1,g1-2", "node1");
}

Test(pod_victims, workload_aware_prefer_single_pod_over_pod_group_for_preemption_candidate)
{
    expect(NODE("node1", "3") BOUND("p1", "node1", LOW, "1", "", "")
               BOUND("g1-1", "node1", LOW, "1", "", IN("pg1"))
                   BOUND("g1-2", "node1", LOW, "1", "", IN("pg1")) GROUPALL("pg1", LOW)
                       PREEMPTOR(HIGH, "1"),
           "p1", "node1");
}

Test(pod_victims, workload_aware_preempt_lower_priority_pod_group_instead_of_higher_priority_pod)
{
    expect(NODE("node1", "2") BOUND("p1", "node1", HIGH, "1", "", "")
               BOUND("g1-1", "node1", LOW, "1", "", IN("pg1")) GROUPALL("pg1", LOW)
                   PREEMPTOR(VERYHIGH, "1"),
           "g1-1", "node1");
}

Test(pod_victims, workload_aware_preempt_lower_priority_pod_instead_of_higher_priority_pod_group)
{
    expect(NODE("node1", "2") BOUND("p1", "node1", LOW, "1", "", "")
               BOUND("g1-1", "node1", HIGH, "1", "", IN("pg1")) GROUPALL("pg1", HIGH)
                   PREEMPTOR(VERYHIGH, "1"),
           "p1", "node1");
}

Test(pod_victims, workload_aware_pdb_prefer_non_violating_pod_group_disruption_mode_all)
{
    expect(NODE("node1", "2") BOUND("g1-1", "node1", LOW, "1", "app: foo", IN("pg-violating"))
               BOUND("g2-1", "node1", MID, "1", "", IN("pg-non-violating"))
                   GROUPALL("pg-violating", LOW) GROUPALL("pg-non-violating", MID)
                       PDB_FOO_0 PREEMPTOR(HIGH, "1"),
           "g2-1", "node1");
}

Test(pod_victims, workload_aware_pdb_prefer_non_violating_pod_group_disruption_mode_single)
{
    expect(NODE("node1", "2") BOUND("g1-1", "node1", LOW, "1", "app: foo", IN("pg-violating"))
               BOUND("g2-1", "node1", MID, "1", "", IN("pg-non-violating"))
                   GROUPSINGLE("pg-violating", LOW) GROUPSINGLE("pg-non-violating", MID)
                       PDB_FOO_0 PREEMPTOR(HIGH, "1"),
           "g2-1", "node1");
}

Test(pod_victims, failure_cannot_preempt_the_victim_with_higher_priority)
{
    /* the group's priority is the preemptor's: no unit is of lower priority */
    cJSON *doc = run_with(GATE, NODE("node1", "1") BOUND("g1-1", "node1", LOW, "1", "", IN("pg1"))
                                    GROUPALL("pg1", HIGH) PREEMPTOR(HIGH, "1"));
    char got[256], node[64];
    outcome(doc, got, sizeof(got), node, sizeof(node));
    cr_expect_str_eq(got, "");
    cr_expect_str_eq(node, "");
    const char *msg = sim_field(sim_pod_entry(doc, "default", "p"), "message");
    cr_expect(msg && strstr(msg, "No preemption victims found for incoming pod"), "%s",
              msg ? msg : "(none)");
    cJSON_Delete(doc);
}

/* ---- upstream TestSelectVictimsOnNode, Cross-node PodGroup ---------------------------------- */

Test(pod_victims, cross_node_pod_group_whole_pod_group_across_multiple_nodes_preempted)
{
    expect(NODE("node-a", "1") NODE("node-b", "1") BOUND("pod-a", "node-a", LOW, "1", "", IN("pg1"))
               BOUND("pod-b", "node-b", LOW, "1", "", IN("pg1")) GROUPALL("pg1", LOW)
                   PREEMPTOR(HIGH, "1"),
           "pod-a,pod-b", NULL);
}

/* ---- what the port adds ------------------------------------------------------------------- */

Test(pod_victims, group_priority_counts_not_its_pods)
{
    /* g1-1's own priority is above the preemptor's; its group's is below: it is a victim */
    expect(NODE("node1", "1") BOUND("g1-1", "node1", VERYHIGH, "1", "", IN("pg1"))
               GROUPSINGLE("pg1", LOW) PREEMPTOR(HIGH, "1"),
           "g1-1", "node1");
}

Test(pod_victims, disruption_mode_single_evicts_only_the_member_on_the_node)
{
    expect(NODE("node-a", "1") NODE("node-b", "1") BOUND("pod-a", "node-a", LOW, "1", "", IN("pg1"))
               BOUND("pod-b", "node-b", MID, "1", "", IN("pg1")) GROUPSINGLE("pg1", LOW)
                   PREEMPTOR(HIGH, "1"),
           "pod-a", NULL);
}

Test(pod_victims, lone_pod_node_beats_node_of_a_disruption_mode_all_member)
{
    /* the e2e scenario: evicting p1 on node1 costs one pod; node2 and node3 each cost the whole
     * of pg1 (g1-1 on node2, g1-2 on node3): fewer victims (and a smaller priority sum) win */
    expect(NODE("node1", "1") NODE("node2", "1") NODE("node3", "1")
               BOUND("p1", "node1", LOW, "1", "", "")
                   BOUND("g1-1", "node2", LOW, "1", "", IN("pg1"))
                       BOUND("g1-2", "node3", LOW, "1", "", IN("pg1")) GROUPALL("pg1", LOW)
                           PREEMPTOR(HIGH, "1"),
           "p1", "node1");
}

Test(pod_victims, pdb_violations_of_a_unit_count_each_violating_pod)
{
    /* node-a: pg1 (both app=foo, PDB allows 0) is one unit with 2 violations; node-b: q (app=foo)
     * 1 violation. Fewest violations wins: node-b, even though node-a's pods have the lower own
     * priority (which would decide the tie if the group counted as 1). */
    expect(NODE("node-a", "2") NODE("node-b", "1")
               BOUND("a1", "node-a", "1", "1", "app: foo", IN("pg1"))
                   BOUND("a2", "node-a", "1", "1", "app: foo", IN("pg1"))
                       BOUND("q", "node-b", LOW, "1", "app: foo", "") GROUPALL("pg1", LOW)
                           PDB_FOO_0 PREEMPTOR(HIGH, "1"),
           "q", "node-b");
}

Test(pod_victims, gate_off_every_pod_alone)
{
    /* without GenericWorkload the API drops schedulingGroup: each pod is its own victim */
    expect_gated("",
                 NODE("node-a", "1") NODE("node-b", "1")
                     BOUND("pod-a", "node-a", LOW, "1", "", IN("pg1"))
                         BOUND("pod-b", "node-b", MID, "1", "", IN("pg1")) GROUPALL("pg1", LOW)
                             PREEMPTOR(HIGH, "1"),
                 "pod-a", "node-a");
}

Test(pod_victims, preemptor_with_scheduling_group_victim_priority_overridden_by_pod_group)
{
    /* upstream TestPodEligibleToPreemptOthers "victim priority overridden by PodGroup": the
     * terminating victim on the nominated node has its own priority above the preemptor's but a
     * PodGroup priority below it, so it is an earlier preemption still under way: no new one */
    cJSON *doc = run_with(
        GATE,
        NODE("only", "1") GROUPSINGLE(
            "pg1",
            "1") "---\napiVersion: v1\nkind: Pod\nmetadata: {name: going, namespace: default, "
                 "deletionTimestamp: \"2024-01-01T00:10:00Z\"}\n"
                 "spec:\n  nodeName: only\n  priority: 5000\n  " IN(
                     "pg1") "\n"
                            "  containers: [{name: c, image: x, resources: {requests: {cpu: "
                            "800m}}}]\n"
                            "status:\n  phase: Running\n  startTime: \"2024-01-01T00:00:00Z\"\n  "
                            "conditions:\n"
                            "  - {type: DisruptionTarget, status: \"True\", reason: "
                            "PreemptionByScheduler}\n"
                            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: "
                            "default}\nspec:\n"
                            "  priority: 1000\n"
                            "  containers: [{name: c, image: x, resources: {requests: {cpu: "
                            "800m}}}]\n"
                            "status: {nominatedNodeName: only}\n");
    const char *msg = sim_field(sim_pod_entry(doc, "default", "p"), "message");
    cr_expect(msg && strstr(msg, "preemption: not eligible due to a terminating pod on the "
                                 "nominated node."),
              "%s", msg ? msg : "(none)");
    cJSON_Delete(doc);
}

/* a 4-CPU node in zone1; extra: its spec */
#define ZONE1_NODE(name, extra)                                                                    \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {zone: zone1}}\n" extra   \
    "status: {allocatable: {cpu: \"4\", memory: 64Gi, pods: \"110\"}}\n"
/* the preemptor, refusing a zone that holds a pod labelled foo */
#define ANTI_FOO_PREEMPTOR                                                                         \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"             \
    "  priority: " HIGH "\n  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuring"   \
    "Execution: [{labelSelector: {matchExpressions: [{key: foo, operator: Exists}]}, "             \
    "topologyKey: zone}]}}\n"                                                                      \
    "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]\n"

Test(pod_victims, cross_node_pod_group_zone_anti_affinity_blocks_reprieve_via_prefilter_extension)
{
    /* The preemptor refuses zone1 while a pod labelled foo is there: pod-y on node-b, a member
     * of pg1 with pod-x on node-a. node-b's taint leaves node-a (upstream's mainNode) as the one
     * place: there the unit's remote member pod-y leaves only through the PreFilter extensions
     * (InterPodAffinity's counts), which is what lets the preemptor fit; reprieving the unit
     * brings pod-y back, so both are victims. */
    expect(ZONE1_NODE("node-a", "")
               ZONE1_NODE("node-b", "spec: {taints: [{key: k, value: v, effect: NoSchedule}]}\n")
                   BOUND("pod-x", "node-a", LOW, "1", "", IN("pg1"))
                       BOUND("pod-y", "node-b", LOW, "1", "foo: \"\"", IN("pg1"))
                           GROUPALL("pg1", LOW) ANTI_FOO_PREEMPTOR,
           "pod-x,pod-y", "node-a");
}
