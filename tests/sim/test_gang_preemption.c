/*
 * Workload-aware preemption in `simulate` (GenericWorkload, v1.37): a PodGroup that cannot be
 * placed runs DefaultPreemption's PodGroupPostFilter over the whole cluster, the group as the
 * preemptor and a PodGroup's pods on nodes as one victim. The victim cases are upstream's
 * TestPodGroupEvaluator_Preempt_Victims (framework/preemption/podgrouppreemption_test.go) with
 * the mock "size" filter turned into CPU: every pod asks for 1 CPU and a node's capacity is its
 * CPU count (bound pods may over-commit a node, as the mock allowed). Upstream calls the evaluator
 * directly; here the group first fails its cycle, so each case starts with no room for it. The
 * cases that depend on a PodGroup's disruption mode "single", or on which of several equal nodes
 * the scheduler picks, are left out.
 */
#include <criterion/criterion.h>

#include "simrun.h"

#define GATE "--feature-gates GenericWorkload=true "
#define LOW "10"
#define MID "100"
#define HIGH "1000"

static void write_cluster(const char *text, char *path)
{
    strcpy(path, "/tmp/ks-gangp-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

static cJSON *run(const char *cluster)
{
    char path[32], args[256];
    write_cluster(cluster, path);
    snprintf(args, sizeof(args), GATE "--max-attempts 10 --cluster %s", path);
    cJSON *doc = sim_json(args);
    unlink(path);
    return doc;
}

#define NODE(name, cpu)                                                                            \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name                                      \
    ", labels: {kubernetes.io/hostname: " name "}}\n"                                              \
    "status: {allocatable: {cpu: \"" cpu "\", memory: 64Gi, pods: \"110\"}}\n"
/* a pod bound to node; extra: more of spec, e.g. "schedulingGroup: {podGroupName: g}" */
#define BOUND(name, node, prio, labels, extra)                                                     \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name                                       \
    ", namespace: default, labels: {" labels "}}\nspec:\n  nodeName: " node "\n  priority: " prio  \
    "\n  " extra "\n"                                                                              \
    "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]\n"
/* the same with cpu requests of its own and no labels */
#define BOUNDC(name, node, prio, cpu)                                                              \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default}\nspec:\n"      \
    "  nodeName: " node "\n  priority: " prio "\n"                                                 \
    "  containers: [{name: c, image: x, resources: {requests: {cpu: \"" cpu "\"}}}]\n"
/* a low-priority pod of group on node, started at start */
#define BOUNDT(name, node, group, start)                                                           \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default}\nspec:\n"      \
    "  nodeName: " node "\n  priority: " LOW "\n  schedulingGroup: {podGroupName: " group "}\n"    \
    "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]\n"                   \
    "status: {startTime: \"" start "\"}\n"
#define IN(group) "schedulingGroup: {podGroupName: " group "}"
#define GROUP(name, prio, min)                                                                     \
    "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " name           \
    ", namespace: default, uid: uid-" name "}\nspec: {priority: " prio                             \
    ", schedulingPolicy: {gang: {minCount: " min "}}}\n"
/* the same with disruptionMode all: its pods are one victim (upstream DisruptionModeAll) */
#define GROUPALL(name, prio, min)                                                                  \
    "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " name           \
    ", namespace: default, uid: uid-" name "}\nspec: {priority: " prio                             \
    ", disruptionMode: {all: {}}, schedulingPolicy: {gang: {minCount: " min "}}}\n"
/* a pending member of the preemptor group "pre" */
#define MEMBER(name, prio, extra)                                                                  \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default}\n"             \
    "spec:\n  priority: " prio "\n  schedulingGroup: {podGroupName: pre}\n  " extra "\n"           \
    "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]\n"
#define MEMBERC(name, prio, cpu)                                                                   \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default}\n"             \
    "spec:\n  priority: " prio "\n  schedulingGroup: {podGroupName: pre}\n"                        \
    "  containers: [{name: c, image: x, resources: {requests: {cpu: \"" cpu "\"}}}]\n"
#define PDB_FOO_0                                                                                  \
    "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: foo, namespace: "     \
    "default}\nspec: {selector: {matchLabels: {app: foo}}}\nstatus: {disruptionsAllowed: 0}\n"

/* The victims the group's preemption chose (reported on its first nominated member's first
 * attempt), sorted by name and joined with ",". */
static void victims_of(const cJSON *doc, char *out, size_t len)
{
    const char *names[32];
    int n = 0;
    const cJSON *it;
    out[0] = '\0';
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "pods"))
    {
        const cJSON *v = cJSON_GetObjectItem(it, "victims"), *x;
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
            continue;
        cJSON_ArrayForEach(x, v)
        {
            if (n < 32)
                names[n++] = sim_field(x, "name");
        }
        break;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(names[j], names[j - 1]) < 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (int i = 0; i < n; i++) {
        size_t l = strlen(out);
        snprintf(out + l, len - l, "%s%s", i ? "," : "", names[i]);
    }
}

static int scheduled(const cJSON *doc, const char *prefix)
{
    int n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "pods"))
    {
        n += !strcmp(sim_field(it, "result"), "Scheduled") &&
             !strncmp(sim_field(it, "name"), prefix, strlen(prefix));
    }
    return n;
}

static void expect_victims(const char *cluster, const char *want, int members)
{
    cJSON *doc = run(cluster);
    char got[512];
    victims_of(doc, got, sizeof(got));
    cr_expect_str_eq(got, want);
    cr_expect_eq(scheduled(doc, "m"), members, "the group is placed after the preemption");
    cJSON_Delete(doc);
}

Test(gang_preemption, preempt_single_lower_priority_pod)
{
    expect_victims(NODE("node1", "1") BOUND("p1", "node1", LOW, "", "") GROUP("pre", HIGH, "1")
                       MEMBER("m", HIGH, ""),
                   "p1", 1);
}

Test(gang_preemption, priority_prefer_lower_priority_victim)
{
    expect_victims(NODE("node1", "2") BOUND("p1", "node1", LOW, "", "")
                       BOUND("p2", "node1", MID, "", "") BOUND("p3", "node1", HIGH, "", "")
                           GROUP("pre", HIGH, "1") MEMBER("m", HIGH, ""),
                   "p1,p2", 1);
}

Test(gang_preemption, efficiency_preempt_minimum_number_of_victims)
{
    expect_victims(NODE("node1", "3") BOUND("p1", "node1", LOW, "", "")
                       BOUND("p2", "node1", LOW, "", "") BOUND("p3", "node1", LOW, "", "")
                           BOUND("p4", "node1", LOW, "", "") GROUP("pre", HIGH, "1")
                               MEMBER("m", HIGH, ""),
                   "p3,p4", 1);
}

Test(gang_preemption, priority_mix_of_no_groups_and_pod_groups)
{
    /* p1 is less important than p2 because it's not part of a pod group */
    expect_victims(NODE("node1", "2") BOUND("p1", "node1", LOW, "", "")
                       BOUND("p2", "node1", LOW, "", IN("pg1")) GROUP("pg1", LOW, "1")
                           GROUP("pre", HIGH, "1") MEMBER("m", HIGH, ""),
                   "p1", 1);
}

Test(gang_preemption, priority_start_time_of_pods_from_same_group_with_disruption_mode_single)
{
    /* p1 is less important than p2 because of later StartTime (upstream: Unix 1 and 0; here a
     * later day: status.startTime 0 reads as unset) */
    expect_victims(NODE("node1", "2") BOUNDT("p1", "node1", "pg1", "2026-01-01T00:00:01Z")
                       BOUNDT("p2", "node1", "pg1", "2026-01-01T00:00:00Z") GROUP("pg1", LOW, "1")
                           GROUP("pre", HIGH, "1") MEMBER("m", HIGH, ""),
                   "p1", 1);
}

Test(gang_preemption, pod_group_with_disruption_mode_group_not_reprieved)
{
    expect_victims(NODE("node1", "1") NODE("node2", "1") BOUND("p1", "node1", LOW, "", IN("pg1"))
                       BOUND("p2", "node2", LOW, "", IN("pg1")) GROUPALL("pg1", LOW, "2")
                           GROUP("pre", HIGH, "1") MEMBER("m", HIGH, ""),
                   "p1,p2", 1);
}

Test(gang_preemption, pdb_prefer_non_violating_victim)
{
    expect_victims(NODE("node1", "2") BOUND("victim-pdb", "node1", LOW, "app: foo", "")
                       BOUND("victim-no-pdb", "node1", LOW, "", "")
                           PDB_FOO_0 GROUP("pre", HIGH, "1") MEMBER("m", HIGH, ""),
                   "victim-no-pdb", 1);
}

Test(gang_preemption, pdb_mixed_groups)
{
    /* pg1 has no PodGroup object: its pods are victims one by one */
    expect_victims(NODE("node1", "2") BOUND("victim-pdb", "node1", LOW, "app: foo", IN("pg1"))
                       BOUND("victim-no-pdb", "node1", LOW, "", IN("pg1"))
                           PDB_FOO_0 GROUP("pre", HIGH, "1") MEMBER("m", HIGH, ""),
                   "victim-no-pdb", 1);
}

Test(gang_preemption, pdb_prefer_removing_non_violating_victim_over_lower_priority_violating)
{
    expect_victims(NODE("node1", "2") BOUND("victim-pdb", "node1", LOW, "app: foo", "")
                       BOUND("victim-no-pdb", "node1", MID, "", "")
                           PDB_FOO_0 GROUP("pre", HIGH, "1") MEMBER("m", HIGH, ""),
                   "victim-no-pdb", 1);
}

Test(gang_preemption, pdb_prefer_lower_priority_pod_when_no_preemption_without_violation)
{
    expect_victims(NODE("node1", "2") BOUND("p1", "node1", LOW, "app: foo", "")
                       BOUND("p2", "node1", MID, "app: foo", "") PDB_FOO_0 GROUP("pre", HIGH, "1")
                           MEMBER("m", HIGH, ""),
                   "p1", 1);
}

Test(gang_preemption, pod_group_preempt_group_as_a_whole)
{
    expect_victims(NODE("node1", "1") NODE("node2", "1") BOUND("p1", "node1", LOW, "", IN("pg1"))
                       BOUND("p2", "node2", LOW, "", IN("pg1")) GROUPALL("pg1", LOW, "1")
                           GROUP("pre", HIGH, "1") MEMBER("m", HIGH, ""),
                   "p1,p2", 1);
}

Test(gang_preemption, pod_group_prefer_single_pod_over_pod_group)
{
    /* node 1 can fit preemptor + pg1 or preemptor + p1 */
    expect_victims(NODE("node1", "3") BOUND("p1", "node1", LOW, "", "")
                       BOUND("g1-1", "node1", LOW, "", IN("pg1"))
                           BOUND("g1-2", "node1", LOW, "", IN("pg1")) GROUPALL("pg1", LOW, "1")
                               GROUP("pre", HIGH, "1") MEMBER("m", HIGH, ""),
                   "p1", 1);
}

Test(gang_preemption, pod_group_preempt_group_as_a_whole_on_single_node)
{
    expect_victims(NODE("node1", "3") BOUND("g1-1", "node1", LOW, "", IN("pg1"))
                       BOUND("g1-2", "node1", LOW, "", IN("pg1")) BOUND("p1", "node1", MID, "", "")
                           GROUPALL("pg1", LOW, "1") GROUP("pre", HIGH, "1") MEMBER("m", HIGH, ""),
                   "g1-1,g1-2", 1);
}

Test(gang_preemption, pdb_unit_violation_if_any_member_violates)
{
    expect_victims(NODE("node1", "3") BOUND("g1-1", "node1", LOW, "app: foo", IN("pg1"))
                       BOUND("g1-2", "node1", LOW, "", IN("pg1")) BOUND("p1", "node1", LOW, "", "")
                           GROUPALL("pg1", LOW, "1") PDB_FOO_0 GROUP("pre", HIGH, "1")
                               MEMBER("m", HIGH, ""),
                   "p1", 1);
}

Test(gang_preemption, priority_divergence_victim_group_lower_than_its_pods)
{
    /* the group's priority counts, not its pods' */
    expect_victims(NODE("node1", "1") NODE("node2", "1") BOUND("p1", "node1", HIGH, "", IN("pg1"))
                       BOUND("p2", "node2", HIGH, "", IN("pg1")) GROUPALL("pg1", MID, "1")
                           GROUP("pre", HIGH, "1") MEMBER("m", HIGH, ""),
                   "p1,p2", 1);
}

Test(gang_preemption, gang_do_not_reprieve_victim_pod_group_of_lower_priority)
{
    expect_victims(NODE("node1", "1") NODE("node2", "1") NODE("node3", "1")
                       BOUND("v1", "node1", MID, "", IN("victim-pg"))
                           BOUND("v2", "node2", MID, "", IN("victim-pg"))
                               BOUND("v3", "node3", LOW, "", "") GROUPALL("victim-pg", MID, "1")
                                   GROUP("pre", HIGH, "3") MEMBER("m-a", HIGH, "")
                                       MEMBER("m-b", HIGH, "") MEMBER("m-c", HIGH, ""),
                   "v1,v2,v3", 3);
}

/* Upstream's "ReprieveFilter: OnVictimReprieved is not called when a victim allowed by
 * ShouldAttemptReprieval fails Filter" without its reprieve filter: v4 fits with m1 (6+3 <= 10)
 * but not once m2 is placed too (6+3+3 > 10), so the members are checked in turn, each added to
 * its node after it passed; the smaller victims are all spared. */
Test(gang_preemption, a_victim_is_spared_only_if_every_member_still_fits_in_turn)
{
    expect_victims(NODE("node1", "10") BOUNDC("v1", "node1", "10", "1")
                       BOUNDC("v2", "node1", "20", "1") BOUNDC("v3", "node1", "30", "1")
                           BOUNDC("v4", "node1", "40", "6") GROUP("pre", HIGH, "2")
                               MEMBERC("m1", HIGH, "3") MEMBERC("m2", HIGH, "3"),
                   "v4", 2);
}

/* A victim that would block a member by its required anti-affinity, not by its size (100m next
 * to a member's 1 CPU on a 2-CPU node), is spared, as upstream spares it: the simulated cycles
 * ran with every victim removed, so InterPodAffinity had nothing to check (PreFilter Skip) and
 * neither its PreFilter extension nor its Filter runs in the reprieve. Only the 1500m filler is
 * evicted, and both members then fit on its node. */
#define ANTI                                                                                       \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: anti, namespace: default}\nspec:\n"          \
    "  nodeName: node1\n  priority: " LOW "\n"                                                     \
    "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [\n"           \
    "    {labelSelector: {matchLabels: {app: gang}}, topologyKey: kubernetes.io/hostname}]}}\n"    \
    "  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n"
#define GANG_MEMBER(name)                                                                          \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default, labels: "      \
    "{app: gang}}\nspec:\n  priority: " HIGH "\n  schedulingGroup: {podGroupName: pre}\n"          \
    "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]\n"
Test(gang_preemption, a_victim_with_anti_affinity_is_spared_as_upstream_spares_it)
{
    expect_victims(NODE("node1", "2") NODE("node2", "2")
                       ANTI BOUNDC("filler", "node2", LOW, "1500m") GROUP("pre", HIGH, "2")
                           GANG_MEMBER("m1") GANG_MEMBER("m2"),
                   "filler", 2);
}

/* The failures, with upstream's messages: what the members that fit say, after PlacementFeasible's
 * message, and what the PodGroup's condition says (the same text). */
static const cJSON *first_entry(const cJSON *doc, const char *name)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "pods"))
    {
        if (!strcmp(sim_field(it, "name"), name))
            return it;
    }
    cr_assert_fail("no entry for %s", name);
    return NULL;
}

static void expect_message(const char *cluster, const char *member, const char *want)
{
    cJSON *doc = run(cluster);
    cr_expect_str_eq(sim_field(first_entry(doc, member), "message"), want);
    cr_expect_eq(scheduled(doc, "m"), 0);
    char got[512];
    victims_of(doc, got, sizeof(got));
    cr_expect_str_eq(got, "", "no victims");
    cJSON_Delete(doc);
}

Test(gang_preemption, failure_cannot_preempt_the_victim_with_higher_priority)
{
    expect_message(NODE("node1", "1") NODE("node2", "1") BOUND("p1", "node1", HIGH, "", "")
                       GROUP("pre", MID, "2") MEMBER("m1", MID, "") MEMBER("m2", MID, ""),
                   "m1",
                   "pod group is unschedulable, minCount (2) cannot be satisfied: 1 scheduled, 0 "
                   "remaining, pod group preemption: No preemption victims found for incoming "
                   "preemptor");
}

Test(gang_preemption, failure_cannot_preempt_the_victim_with_equal_priority)
{
    expect_message(NODE("node1", "1") NODE("node2", "1") BOUND("p1", "node1", MID, "", "")
                       GROUP("pre", MID, "2") MEMBER("m1", MID, "") MEMBER("m2", MID, ""),
                   "m1",
                   "pod group is unschedulable, minCount (2) cannot be satisfied: 1 scheduled, 0 "
                   "remaining, pod group preemption: No preemption victims found for incoming "
                   "preemptor");
}

Test(gang_preemption, priority_divergence_victim_group_higher_than_its_pods)
{
    expect_message(NODE("node1", "1") NODE("node2", "1") NODE("node3", "1")
                       BOUND("p1", "node1", LOW, "", IN("pg1"))
                           BOUND("p2", "node2", LOW, "", IN("pg1")) GROUPALL("pg1", MID, "1")
                               GROUP("pre", MID, "2") MEMBER("m1", MID, "") MEMBER("m2", MID, ""),
                   "m1",
                   "pod group is unschedulable, minCount (2) cannot be satisfied: 1 scheduled, 0 "
                   "remaining, pod group preemption: No preemption victims found for incoming "
                   "preemptor");
}

/* preemptionPolicy Never on a member makes the group ineligible (upstream
 * resolvePreemptionPolicy without PodGroupPreemptionPolicy). */
Test(gang_preemption, a_member_with_preemption_policy_never_makes_the_group_ineligible)
{
    expect_message(NODE("node1", "1") NODE("node2", "1") BOUND("p1", "node1", LOW, "", "")
                       GROUP("pre", HIGH, "2") MEMBER("m1", HIGH, "preemptionPolicy: Never")
                           MEMBER("m2", HIGH, ""),
                   "m1",
                   "pod group is unschedulable, minCount (2) cannot be satisfied: 1 scheduled, 0 "
                   "remaining, pod group preemption: not eligible due to preemptionPolicy=Never.");
}

/* Even without the victims the group does not fit: the simulated cycle's status, after
 * "pod group preemption: ". m1 fits, m2 does not, m3 is never tried: upstream's
 * completePodGroupAlgorithmResult gives it the group's status as it was before PodGroupPostFilter
 * appended to it. */
Test(gang_preemption, the_group_does_not_fit_even_without_the_victims)
{
    cJSON *doc = run(NODE("node1", "1") NODE("node2", "1") BOUND("p1", "node2", LOW, "", "") GROUP(
        "pre", HIGH, "3") MEMBER("m1", HIGH, "") MEMBER("m2", HIGH, "") MEMBER("m3", HIGH, ""));
    cr_expect_str_eq(sim_field(first_entry(doc, "m1"), "message"),
                     "pod group is unschedulable, minCount (3) cannot be satisfied: 1 scheduled, 1 "
                     "remaining, pod group preemption: minCount (3) cannot be satisfied: 2 "
                     "scheduled, 0 remaining");
    cr_expect_str_eq(sim_field(first_entry(doc, "m2"), "message"),
                     "0/2 nodes are available: 2 Insufficient cpu.");
    cr_expect_str_eq(sim_field(first_entry(doc, "m3"), "message"),
                     "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining");
    char got[128];
    victims_of(doc, got, sizeof(got));
    cr_expect_str_eq(got, "");
    cr_expect_eq(scheduled(doc, "m"), 0);
    cJSON_Delete(doc);
}

/* A terminating lower-priority pod, evicted by an earlier preemption, still on a member's
 * nominated node: upstream's isOngoingPreemption; the group waits, its members keep their
 * nominations, nothing more is evicted. */
Test(gang_preemption, a_terminating_victim_on_a_nominated_node_is_an_ongoing_preemption)
{
    cJSON *doc = run(NODE("node1", "1") NODE("node2", "1") NODE(
        "node3",
        "1") "---\napiVersion: v1\nkind: Pod\nmetadata: {name: leaving, namespace: default, "
             "deletionTimestamp: \"2026-01-01T00:00:00Z\"}\nspec:\n  nodeName: node1\n  "
             "priority: " LOW
             "\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]\nstatus:\n"
             "  conditions: [{type: DisruptionTarget, status: \"True\", reason: "
             "PreemptionByScheduler}]\n" BOUND("p2", "node2", LOW, "", "") GROUP("pre", HIGH, "3")
                         MEMBER("m1", HIGH, "")
                             MEMBER("m2", HIGH, "") "---\napiVersion: v1\nkind: Pod\n"
                                                    "metadata: {name: m3, namespace: "
                                                    "default}\nspec:\n  priority: " HIGH
                                                    "\n  schedulingGroup: {podGroupName: pre}\n  "
                                                    "containers: [{name: c, image: x, resources: "
                                                    "{requests: {cpu: \"1\"}}}]\nstatus: "
                                                    "{nominatedNodeName: node1}\n");
    int ongoing = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "pods"))
    {
        ongoing += !strcmp(sim_field(it, "message"),
                           "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining, pod group "
                           "preemption: ongoing preemption on nominated nodes");
    }
    cr_expect_geq(ongoing, 1, "the member that fit says the preemption is under way");
    char got[128];
    victims_of(doc, got, sizeof(got));
    cr_expect_str_eq(got, "", "nothing more evicted");
    cr_expect_eq(scheduled(doc, "m"), 0);
    cJSON_Delete(doc);
}

/* A group placed after its preemption: the member that fit says so with the group's status (no
 * "pod group is unschedulable, ": it waits on the preemption), the members are nominated where
 * the simulation put them and placed there once the victims are gone. */
Test(gang_preemption, the_members_are_nominated_and_placed_after_the_victims_leave)
{
    cJSON *doc =
        run(NODE("n1", "1") NODE("n2", "1") NODE("n3", "1") BOUND("low2", "n2", LOW, "", "")
                BOUND("low3", "n3", LOW, "", "") GROUP("pre", HIGH, "3") MEMBER("m1", HIGH, "")
                    MEMBER("m2", HIGH, "") MEMBER("m3", HIGH, ""));
    const cJSON *m1 = first_entry(doc, "m1");
    cr_expect_str_eq(sim_field(m1, "result"), "Unschedulable");
    cr_expect_str_eq(sim_field(m1, "message"),
                     "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining, pod group "
                     "preemption: found a placement for podgroup, preempting 2 victims");
    cr_expect_str_eq(sim_field(first_entry(doc, "m3"), "message"),
                     "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining");
    const char *names[] = {"m1", "m2", "m3"};
    for (int i = 0; i < 3; i++)
        cr_expect_not_null(sim_field(first_entry(doc, names[i]), "nominatedNode"),
                           "%s was nominated", names[i]);
    char got[128];
    victims_of(doc, got, sizeof(got));
    cr_expect_str_eq(got, "low2,low3");
    int reports = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "pods"))
    {
        reports += cJSON_GetArraySize(cJSON_GetObjectItem(it, "victims")) > 0;
    }
    cr_expect_eq(reports, 1, "one preemption, its victims on one member's attempt");
    cr_expect_eq(scheduled(doc, "m"), 3);
    cJSON_Delete(doc);
}

/* A profile whose podGroupPostFilter set disables DefaultPreemption: upstream's
 * RunPodGroupPostFilterPlugins runs no plugin and returns Unschedulable without a reason, which
 * the group's status still appends (an empty reason: the message ends with ", "). */
Test(gang_preemption, without_default_preemption_the_group_says_so)
{
    char cpath[32], kpath[32], args[256];
    write_cluster(NODE("n1", "1") NODE("n2", "1") BOUND("low1", "n2", LOW, "", "")
                      GROUP("pre", HIGH, "2") MEMBER("m1", HIGH, "") MEMBER("m2", HIGH, ""),
                  cpath);
    write_cluster("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                  "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
                  "    podGroupPostFilter:\n      disabled: [{name: DefaultPreemption}]\n",
                  kpath);
    snprintf(args, sizeof(args), GATE "--max-attempts 3 --cluster %s --config %s", cpath, kpath);
    cJSON *doc = sim_json(args);
    cr_expect_str_eq(sim_field(first_entry(doc, "m1"), "message"),
                     "pod group is unschedulable, minCount (2) cannot be satisfied: 1 scheduled, 0 "
                     "remaining, ");
    cJSON_Delete(doc);
    unlink(cpath);
    unlink(kpath);
}
