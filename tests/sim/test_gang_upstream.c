/*
 * Upstream's gang scheduling in `simulate` (GenericWorkload, v1.37): scheduling.k8s.io/v1beta1
 * PodGroups read from the cluster file (with the API server's rules), pods naming them in
 * spec.schedulingGroup, and the default profile's GangScheduling (appended only with the gate
 * on): a gang is placed whole or not at all, PreEnqueue holds a gang short of minCount, the gate
 * off reads no PodGroup; the PodGroup scheduling cycle tries a gang's members together and
 * places all of them or none, with upstream's messages.
 */
#include <criterion/criterion.h>

#include "simrun.h"

#define GATE "--feature-gates GenericWorkload=true "

/* Writes text to a new temporary file; its path in path (32 bytes). */
static void write_cluster(const char *text, char *path)
{
    strcpy(path, "/tmp/ks-gang-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

#define NODE(name)                                                                                 \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                                \
    "status: {allocatable: {cpu: \"1\", memory: 8Gi, pods: \"110\"}}\n"
#define GROUP(name, policy)                                                                        \
    "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " name           \
    ", namespace: default}\nspec: {schedulingPolicy: " policy "}\n"
/* a member needing 800m: one per 1-cpu node */
#define MEMBER(name, group)                                                                        \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default}\n"             \
    "spec:\n  schedulingGroup: {podGroupName: " group "}\n"                                        \
    "  containers: [{name: c, image: x, resources: {requests: {cpu: 800m}}}]\n"

static cJSON *run(const char *gates, const char *cluster)
{
    char path[32], args[256];
    write_cluster(cluster, path);
    snprintf(args, sizeof(args), "%s--max-attempts 40 --cluster %s", gates, path);
    cJSON *doc = sim_json(args);
    unlink(path);
    return doc;
}

static int scheduled(const cJSON *doc)
{
    int n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "pods"))
    {
        n += !strcmp(sim_field(it, "result"), "Scheduled");
    }
    return n;
}

/* A gang of 4 on room for 3: never partly placed. The three that fit are unreserved and
 * forgotten with PlacementFeasible's message and, after ", ", what the group's preemption
 * (DefaultPreemption's PodGroupPostFilter) found: nothing of lower priority, as kube-scheduler
 * v1.37.2 says it; the fourth says why it did not fit, without a per-pod PostFilter message.
 * Nothing waits on Permit. The group is tried again after its backoff, not on an event
 * (upstream AddAttemptedPodGroupIfNeeded requeues a turned-away group to backoffQ; the real
 * kube-scheduler tries such a gang at 1, 2, 4, 8, 16 s), every attempt ending the same way. */
Test(gang_upstream, a_gang_of_four_on_room_for_three_is_never_partly_placed)
{
    cJSON *doc =
        run(GATE, NODE("n1") NODE("n2") NODE("n3") GROUP("g", "{gang: {minCount: 4}}")
                      MEMBER("p1", "g") MEMBER("p2", "g") MEMBER("p3", "g") MEMBER("p4", "g"));
    cr_expect_eq(scheduled(doc), 0);
    int entries = cJSON_GetArraySize(cJSON_GetObjectItem(doc, "pods"));
    cr_expect_gt(entries, 4, "the group is tried again after its backoff: %d attempts", entries);
    cr_expect_eq(entries % 4, 0, "every member in every attempt: %d", entries);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "pods"))
    {
        const char *name = sim_field(it, "name");
        if (!strcmp(name, "p4"))
            cr_expect_str_eq(sim_field(it, "message"),
                             "0/3 nodes are available: 3 Insufficient cpu.");
        else
            cr_expect_str_eq(sim_field(it, "message"),
                             "pod group is unschedulable, minCount (4) cannot be satisfied: 3 "
                             "scheduled, 0 remaining, pod group preemption: No preemption victims "
                             "found for incoming preemptor",
                             "%s", name);
    }
    cJSON_Delete(doc);
}

/* More members than minCount: the group is placed once minCount fit, and the members that do
 * not fit are turned away alone (upstream "More than minCount pods, minCount ..." cases). */
Test(gang_upstream, members_beyond_min_count_that_do_not_fit_are_turned_away_alone)
{
    cJSON *doc = run(GATE, NODE("n1") NODE("n2") GROUP("g", "{gang: {minCount: 2}}")
                               MEMBER("p1", "g") MEMBER("p2", "g") MEMBER("p3", "g"));
    cr_expect_eq(scheduled(doc), 2);
    int no_room = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "pods"))
    {
        const char *m = sim_field(it, "message");
        no_room += m && !strcmp(m, "0/2 nodes are available: 2 Insufficient cpu.");
    }
    cr_expect_geq(no_room, 1);
    cJSON_Delete(doc);
}

/* A gang of 3 on room for 2: the third member's failure leaves "2 scheduled, 0 remaining", the
 * two that fit are turned away with the group's message, none is placed. */
Test(gang_upstream, the_cycle_stops_as_soon_as_min_count_cannot_be_met)
{
    cJSON *doc = run(GATE, NODE("n1") NODE("n2") GROUP("g", "{gang: {minCount: 3}}")
                               MEMBER("p1", "g") MEMBER("p2", "g") MEMBER("p3", "g"));
    cr_expect_eq(scheduled(doc), 0);
    int group_msgs = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "pods"))
    {
        const char *m = sim_field(it, "message");
        group_msgs += m && strstr(m, "pod group is unschedulable, minCount (3) cannot be "
                                     "satisfied: 2 scheduled, 0 remaining") != NULL;
    }
    /* every attempt (the group is tried again after its backoff) ends the same way */
    int entries = cJSON_GetArraySize(cJSON_GetObjectItem(doc, "pods"));
    cr_expect_eq(group_msgs * 3, 2 * entries,
                 "the two that fit carry the group's message: %d of %d", group_msgs, entries);
    cJSON_Delete(doc);
}

/* The same gang with a fourth node: all four placed, on four nodes. */
Test(gang_upstream, a_gang_that_fits_is_placed_whole)
{
    cJSON *doc =
        run(GATE, NODE("n1") NODE("n2") NODE("n3") NODE("n4") GROUP("g", "{gang: {minCount: 4}}")
                      MEMBER("p1", "g") MEMBER("p2", "g") MEMBER("p3", "g") MEMBER("p4", "g"));
    cr_expect_eq(scheduled(doc), 4);
    const char *nodes[4];
    const char *names[] = {"p1", "p2", "p3", "p4"};
    for (int i = 0; i < 4; i++) {
        const cJSON *e = sim_pod_entry(doc, "default", names[i]);
        cr_expect_str_eq(sim_field(e, "result"), "Scheduled", "%s", names[i]);
        nodes[i] = sim_field(e, "node");
        for (int j = 0; j < i; j++)
            cr_expect(nodes[i] && nodes[j] && strcmp(nodes[i], nodes[j]), "%s shares a node",
                      names[i]);
    }
    cJSON_Delete(doc);
}

/* PreEnqueue: a gang short of minCount pods, and a pod whose PodGroup does not exist, never
 * enter the active queue; upstream's messages. */
Test(gang_upstream, pre_enqueue_holds_an_incomplete_gang_and_a_missing_group)
{
    cJSON *doc = run(GATE, NODE("n1") NODE("n2") NODE("n3") GROUP("g", "{gang: {minCount: 3}}")
                               MEMBER("p1", "g") MEMBER("p2", "g") MEMBER("lonely", "nope"));
    cr_expect_eq(scheduled(doc), 0);
    cr_expect_str_eq(sim_field(sim_pod_entry(doc, "default", "p1"), "message"),
                     "waiting for minCount pods from a gang to appear in scheduling queue");
    cr_expect_str_eq(sim_field(sim_pod_entry(doc, "default", "p2"), "message"),
                     "waiting for minCount pods from a gang to appear in scheduling queue");
    cr_expect_str_eq(sim_field(sim_pod_entry(doc, "default", "lonely"), "message"),
                     "waiting for pods's pod group \"nope\" to appear in scheduling queue");
    cJSON_Delete(doc);
}

/* A basic policy is no gang (upstream getMinCount: 1): its members go through one PodGroup
 * cycle and as many as fit are placed. */
Test(gang_upstream, a_basic_group_places_as_many_as_fit)
{
    cJSON *doc = run(GATE, NODE("n1") NODE("n2") GROUP("b", "{basic: {}}") MEMBER("p1", "b")
                               MEMBER("p2", "b") MEMBER("p3", "b"));
    cr_expect_eq(scheduled(doc), 2);
    cJSON_Delete(doc);
}

/* The gate off (the default, as upstream v1.37): no GangScheduling in the default profile, the
 * PodGroup is a kind kubesched does not read, and the pods are placed as many as fit. */
Test(gang_upstream, without_the_gate_there_is_no_gang)
{
    char path[32], args[256], *out, err[4096];
    write_cluster(NODE("n1") NODE("n2") NODE("n3") GROUP("g", "{gang: {minCount: 4}}")
                      MEMBER("p1", "g") MEMBER("p2", "g") MEMBER("p3", "g") MEMBER("p4", "g"),
                  path);
    snprintf(args, sizeof(args), "simulate -o json --cluster %s", path);
    cr_assert_eq(sim_run(args, &out, err, sizeof(err)), 0, "%s", err);
    cr_expect(strstr(err, "1 of kinds kubesched does not read (1 PodGroup)"), "%s", err);
    cJSON *doc = cJSON_Parse(out);
    cr_assert_not_null(doc);
    cr_expect_eq(scheduled(doc), 3);
    cJSON_Delete(doc);
    free(out);
    unlink(path);
}

/* A PodGroup the API server would refuse is refused at its field, with upstream's wording. */
Test(gang_upstream, an_invalid_pod_group_is_refused_at_its_field)
{
    static const struct {
        const char *policy, *want;
    } cases[] = {
        {"{gang: {minCount: 0}}", "spec.schedulingPolicy.gang.minCount: Required value"},
        {"{gang: {minCount: -2}}", "spec.schedulingPolicy.gang.minCount: Invalid value: -2: must "
                                   "be greater than or equal to 1"},
        {"{}", "spec.schedulingPolicy: Invalid value: \"\": must specify one of: `basic`, `gang`"},
        {"{basic: {}, gang: {minCount: 2}}",
         "spec.schedulingPolicy: Invalid value: \"{`basic`, `gang`}\": must specify exactly one "
         "of: `basic`, `gang`"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char cluster[1024], path[32], args[256], *out, err[4096];
        snprintf(cluster, sizeof(cluster),
                 NODE("n1") "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: "
                            "{name: g, namespace: default}\nspec: {schedulingPolicy: %s}\n",
                 cases[i].policy);
        write_cluster(cluster, path);
        snprintf(args, sizeof(args), "simulate " GATE "--cluster %s", path);
        cr_expect_neq(sim_run(args, &out, err, sizeof(err)), 0, "%s accepted", cases[i].policy);
        cr_expect(strstr(err, cases[i].want), "%s: %s", cases[i].policy, err);
        cr_expect(strstr(err, "PodGroup default/g"), "%s", err);
        free(out);
        unlink(path);
    }
}

/* --feature-gates knows the gate and says so when given a wrong one. */
Test(gang_upstream, the_gate_is_named_in_the_unknown_gate_error)
{
    char *out, err[2048];
    cr_expect_eq(sim_run("simulate --feature-gates GenericWorkloads=true --cluster /dev/null", &out,
                         err, sizeof(err)),
                 2);
    cr_expect(strstr(err, "GenericWorkload)"), "%s", err);
    free(out);
}

/* A gang turned away leaves nothing behind: its members that fit were unreserved and forgotten,
 * so a pod that names no group finds their room. */
Test(gang_upstream, a_refused_gang_gives_its_room_back)
{
    cJSON *doc =
        run(GATE,
            NODE("n1") NODE("n2") GROUP("g", "{gang: {minCount: 3}}") MEMBER("a1", "g")
                MEMBER("a2", "g") MEMBER(
                    "a3", "g") "---\napiVersion: v1\nkind: Pod\nmetadata: {name: plain, namespace: "
                               "default}\nspec:\n  containers: [{name: c, image: x, resources: "
                               "{requests: {cpu: 800m}}}]\n");
    cr_expect_str_eq(sim_field(sim_pod_entry(doc, "default", "plain"), "result"), "Scheduled");
    cr_expect_eq(scheduled(doc), 1, "only the plain pod");
    cJSON_Delete(doc);
}
