/*
 * The scheduler cache and its snapshot (core/sched/cache.c): nodes and pods in, assume / forget /
 * confirm, the per-node requested and non-zero requested sums, the incremental snapshot update
 * (only changed NodeInfos copied), the node list order (insertion order, zones interleaved
 * round-robin as upstream's nodeTree), and nodes removed while pods still run there.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sched/cache.h"
#include "sched/host_api.h"
#include "api/intern.h"
#include "api/objects.h"
#include "harness.h"

#define MI (1024LL * 1024)

static void setup(void) { ks__host_init(); }

TestSuite(cache, .init = setup);

/* A node; zone may be NULL. labels_extra is more label JSON ("" for none). */
static ks_node *mknode_labels(const char *name, const char *labels)
{
    char text[1024], err[256];
    ks_node *n = NULL;
    snprintf(text, sizeof(text),
             "{'metadata':{'name':'%s','labels':{%s}},"
             "'status':{'allocatable':{'cpu':'4','memory':'8Gi','pods':'110'}}}",
             name, labels);
    cJSON *obj = th_json(text);
    int rc = ks__node_from_json(obj, &n, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "%s", err);
    return n;
}

static ks_node *mknode(const char *name, const char *zone)
{
    char labels[256] = "";
    if (zone)
        snprintf(labels, sizeof(labels), "'topology.kubernetes.io/zone':'%s'", zone);
    return mknode_labels(name, labels);
}

/* A pod with uid, on node (NULL: unassigned), requesting cpu / memory (NULL: no request). */
static ks_pod *mkpod(const char *uid, const char *node_name, const char *cpu, const char *mem)
{
    char text[1024], req[256] = "", err[256];
    ks_pod *p = NULL;
    if (cpu || mem)
        snprintf(req, sizeof(req), ",'resources':{'requests':{%s%s%s%s%s%s%s}}",
                 cpu ? "'cpu':'" : "", cpu ? cpu : "", cpu ? "'" : "", cpu && mem ? "," : "",
                 mem ? "'memory':'" : "", mem ? mem : "", mem ? "'" : "");
    snprintf(text, sizeof(text),
             "{'metadata':{'name':'%s','namespace':'ns','uid':'%s'},"
             "'spec':{%s%s%s'containers':[{'name':'c'%s}]}}",
             uid, uid, node_name ? "'nodeName':'" : "", node_name ? node_name : "",
             node_name ? "'," : "", req);
    cJSON *obj = th_json(text);
    int rc = ks__pod_from_json(obj, &p, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "%s", err);
    return p;
}

static ks_sym sym(const char *s) { return ks__intern(s); }

/* Adds and drops the test's own reference. */
static void add_node(ks_cache *c, ks_node *n)
{
    cr_assert_eq(ks__cache_add_node(c, n), 0);
    ks__node_unref(n);
}

static void add_pod(ks_cache *c, ks_pod *p)
{
    cr_assert_eq(ks__cache_add_pod(c, p), 0);
    ks__pod_unref(p);
}

static void assume(ks_cache *c, const char *uid, const char *node_name, const char *cpu)
{
    ks_pod *p = mkpod(uid, NULL, cpu, NULL);
    ks_pod *a = ks__pod_with_node(p, sym(node_name));
    ks__pod_unref(p);
    cr_assert_eq(ks__cache_assume_pod(c, a), 0);
    ks__pod_unref(a);
}

static const ks_node_info *find(ks_snapshot *s, const char *name)
{
    return ks__snapshot_find(s, sym(name));
}

static void update(ks_cache *c, ks_snapshot *s)
{
    cr_assert_eq(ks__cache_update_snapshot(c, s), 0);
}

/* The snapshot's node list as "a,b,c". */
static const char *order(ks_snapshot *s)
{
    static char buf[1024];
    buf[0] = '\0';
    for (size_t i = 0; i < s->nnodes; i++) {
        if (i)
            strcat(buf, ",");
        strcat(buf, ks__sym_str(s->nodes[i]->name));
    }
    return buf;
}

static ks_cache_counts counts(ks_cache *c)
{
    ks_cache_counts k;
    ks__cache_counts(c, &k);
    return k;
}

/* ---- nodes and pods ----------------------------------------------------------------------- */

Test(cache, counts_nodes_and_pods)
{
    ks_cache *c = ks__cache_new();
    cr_expect_eq(counts(c).nodes, 0);
    add_node(c, mknode("n1", NULL));
    add_node(c, mknode("n2", NULL));
    add_node(c, mknode("n1", NULL)); /* replace, not a second node */
    add_pod(c, mkpod("p1", "n1", "100m", NULL));
    add_pod(c, mkpod("p2", "n2", NULL, NULL));
    assume(c, "p3", "n2", "1");
    ks_cache_counts k = counts(c);
    cr_expect_eq(k.nodes, 2);
    cr_expect_eq(k.pods, 3);
    cr_expect_eq(k.assumed, 1);
    ks__cache_free(c);
    ks__cache_free(NULL);
}

Test(cache, sums_requested_and_nonzero_requested_per_node)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_pod(c, mkpod("p1", "n1", "500m", "1Gi"));
    add_pod(c, mkpod("p2", "n1", NULL, NULL));
    add_pod(c, mkpod("p3", "n1", "0", "100Mi"));
    update(c, s);
    const ks_node_info *ni = find(s, "n1");
    cr_assert_not_null(ni);
    cr_expect_eq(ni->npods, 3);
    cr_expect_eq(ni->requested.pub.milli_cpu, 500);
    cr_expect_eq(ni->requested.pub.memory, 1024 * MI + 100 * MI);
    cr_expect_eq(ni->nonzero_requested.pub.milli_cpu, 500 + 100 + 0);
    cr_expect_eq(ni->nonzero_requested.pub.memory, 1024 * MI + 200 * MI + 100 * MI);
    cr_expect_eq(ni->node->allocatable.pub.milli_cpu, 4000);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, subtracts_a_removed_pod)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_pod(c, mkpod("p1", "n1", "500m", NULL));
    add_pod(c, mkpod("p2", "n1", "250m", NULL));
    add_pod(c, mkpod("p3", "n1", "125m", NULL));
    cr_expect_eq(ks__cache_remove_pod(c, "p2"), 0);
    cr_expect_eq(ks__cache_remove_pod(c, "p2"), KS_ENOTFOUND);
    cr_expect_eq(ks__cache_remove_pod(c, "nope"), KS_ENOTFOUND);
    update(c, s);
    const ks_node_info *ni = find(s, "n1");
    cr_assert_eq(ni->npods, 2);
    cr_expect_str_eq(ni->pods[0]->uid, "p1"); /* order of the remaining pods kept */
    cr_expect_str_eq(ni->pods[1]->uid, "p3");
    cr_expect_eq(ni->requested.pub.milli_cpu, 625);
    cr_expect_eq(ni->nonzero_requested.pub.milli_cpu, 625);
    cr_expect_eq(ni->nonzero_requested.pub.memory, 400 * MI);
    cr_expect_eq(counts(c).pods, 2);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, rejects_a_pod_without_a_node)
{
    ks_cache *c = ks__cache_new();
    ks_pod *p = mkpod("p1", NULL, "1", NULL);
    cr_expect_eq(ks__cache_add_pod(c, p), KS_EINVAL);
    cr_expect_eq(counts(c).pods, 0);
    ks__pod_unref(p);
    ks__cache_free(c);
}

Test(cache, moves_an_updated_pod_to_its_new_node)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_node(c, mknode("n2", NULL));
    add_pod(c, mkpod("p1", "n1", "1", NULL));
    ks_pod *moved = mkpod("p1", "n2", "2", NULL);
    cr_expect_eq(ks__cache_update_pod(c, moved), 0);
    ks__pod_unref(moved);
    update(c, s);
    cr_expect_eq(find(s, "n1")->npods, 0);
    cr_expect_eq(find(s, "n1")->requested.pub.milli_cpu, 0);
    cr_expect_eq(find(s, "n2")->npods, 1);
    cr_expect_eq(find(s, "n2")->requested.pub.milli_cpu, 2000);
    cr_expect_eq(counts(c).pods, 1);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

/* ---- assume / forget / confirm ------------------------------------------------------------ */

Test(cache, counts_an_assumed_pod_on_its_node)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    assume(c, "p1", "n1", "300m");
    cr_expect(ks__cache_is_assumed(c, "p1"));
    cr_expect_not(ks__cache_is_assumed(c, "other"));
    update(c, s);
    cr_expect_eq(find(s, "n1")->npods, 1);
    cr_expect_eq(find(s, "n1")->requested.pub.milli_cpu, 300);
    cr_expect_eq(ks__cache_finish_binding(c, "p1"), 0);
    cr_expect(ks__cache_is_assumed(c, "p1"), "finishing the bind does not confirm");
    cr_expect_eq(ks__cache_finish_binding(c, "other"), KS_ENOTFOUND);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, refuses_to_assume_a_pod_twice)
{
    ks_cache *c = ks__cache_new();
    add_node(c, mknode("n1", NULL));
    assume(c, "p1", "n1", "300m");
    ks_pod *p = mkpod("p1", "n1", "300m", NULL);
    cr_expect_eq(ks__cache_assume_pod(c, p), KS_EEXIST);
    ks__pod_unref(p);
    cr_expect_eq(counts(c).assumed, 1);
    ks__cache_free(c);
}

Test(cache, forgets_an_assumed_pod)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_pod(c, mkpod("bound", "n1", "100m", NULL));
    assume(c, "p1", "n1", "300m");
    cr_expect_eq(ks__cache_forget_pod(c, "p1"), 0);
    cr_expect_not(ks__cache_is_assumed(c, "p1"));
    cr_expect_eq(ks__cache_forget_pod(c, "p1"), KS_ENOTFOUND);
    cr_expect_eq(ks__cache_forget_pod(c, "bound"), KS_ENOTFOUND, "a bound pod is not forgotten");
    ks_cache_counts k = counts(c);
    cr_expect_eq(k.pods, 1);
    cr_expect_eq(k.assumed, 0);
    update(c, s);
    cr_expect_eq(find(s, "n1")->npods, 1);
    cr_expect_eq(find(s, "n1")->requested.pub.milli_cpu, 100);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, confirms_an_assumed_pod_when_it_is_added)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    assume(c, "p1", "n1", "300m");
    add_pod(c, mkpod("p1", "n1", "300m", NULL));
    cr_expect_not(ks__cache_is_assumed(c, "p1"));
    ks_cache_counts k = counts(c);
    cr_expect_eq(k.pods, 1);
    cr_expect_eq(k.assumed, 0);
    update(c, s);
    cr_expect_eq(find(s, "n1")->npods, 1, "counted once");
    cr_expect_eq(find(s, "n1")->requested.pub.milli_cpu, 300);
    cr_expect_eq(ks__cache_forget_pod(c, "p1"), KS_ENOTFOUND, "a confirmed pod is not forgotten");
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, confirms_an_assumed_pod_bound_elsewhere_on_the_real_node)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_node(c, mknode("n2", NULL));
    assume(c, "p1", "n1", "300m");
    add_pod(c, mkpod("p1", "n2", "300m", NULL));
    update(c, s);
    cr_expect_eq(find(s, "n1")->npods, 0);
    cr_expect_eq(find(s, "n1")->requested.pub.milli_cpu, 0);
    cr_expect_eq(find(s, "n2")->npods, 1);
    cr_expect_eq(counts(c).assumed, 0);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, removes_an_assumed_pod)
{
    ks_cache *c = ks__cache_new();
    add_node(c, mknode("n1", NULL));
    assume(c, "p1", "n1", "300m");
    cr_expect_eq(ks__cache_remove_pod(c, "p1"), 0);
    ks_cache_counts k = counts(c);
    cr_expect_eq(k.pods, 0);
    cr_expect_eq(k.assumed, 0);
    ks__cache_free(c);
}

/* ---- snapshot ----------------------------------------------------------------------------- */

Test(cache, copies_only_changed_node_infos_into_the_snapshot)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_node(c, mknode("n2", NULL));
    add_node(c, mknode("n3", NULL));
    add_pod(c, mkpod("a", "n1", "100m", NULL));
    add_pod(c, mkpod("b", "n2", "100m", NULL));
    update(c, s);
    const ks_node_info *n1 = find(s, "n1"), *n2 = find(s, "n2"), *n3 = find(s, "n3");
    ks_pod **n1_pods = n1->pods;
    uint64_t gen1 = n1->generation, gen2 = n2->generation;
    cr_expect_eq(n1->requested.pub.milli_cpu, 100);

    add_pod(c, mkpod("c", "n2", "200m", NULL));
    /* Not yet visible: the snapshot is a copy. */
    cr_expect_eq(n2->npods, 1);
    cr_expect_eq(n2->requested.pub.milli_cpu, 100);
    update(c, s);

    cr_expect_eq(find(s, "n1"), n1, "the NodeInfo stays where it is");
    cr_expect_eq(find(s, "n2"), n2);
    cr_expect_eq(find(s, "n3"), n3);
    cr_expect_eq(n1->pods, n1_pods, "an unchanged NodeInfo is not copied again");
    cr_expect_eq(n1->generation, gen1);
    cr_expect_eq(n2->npods, 2, "a changed NodeInfo gets the new content");
    cr_expect_eq(n2->requested.pub.milli_cpu, 300);
    cr_expect_gt(n2->generation, gen2);
    cr_expect_eq(s->nnodes, 3);

    /* A second update with nothing changed copies nothing. */
    const ks_pod *const *n2_pods = (const ks_pod *const *)n2->pods;
    update(c, s);
    cr_expect_eq((const ks_pod *const *)n2->pods, n2_pods);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, keeps_snapshot_pods_alive_after_the_cache_drops_them)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_pod(c, mkpod("a", "n1", "100m", NULL));
    update(c, s);
    cr_expect_eq(ks__cache_remove_pod(c, "a"), 0);
    const ks_node_info *n1 = find(s, "n1");
    cr_assert_eq(n1->npods, 1);
    cr_expect_str_eq(n1->pods[0]->uid, "a"); /* the snapshot holds its own reference */
    update(c, s);
    cr_expect_eq(n1->npods, 0);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, finds_nodes_by_name_in_a_large_snapshot)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    char name[32];
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "node-%03d", i);
        add_node(c, mknode(name, NULL));
    }
    update(c, s);
    cr_assert_eq(s->nnodes, 300);
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "node-%03d", i);
        const ks_node_info *ni = find(s, name);
        cr_assert_not_null(ni, "%s", name);
        cr_expect_str_eq(ks__sym_str(ni->name), name);
        cr_expect_eq(s->nodes[i], ni, "insertion order");
    }
    cr_expect_null(find(s, "node-300"));
    ks__snapshot_free(s);
    ks__snapshot_free(NULL);
    ks__cache_free(c);
}

Test(cache, lists_nodes_in_insertion_order_without_zones)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("zeta", NULL));
    add_node(c, mknode("alpha", NULL));
    add_node(c, mknode("mid", NULL));
    update(c, s);
    cr_expect_str_eq(order(s), "zeta,alpha,mid");
    add_node(c, mknode("alpha", NULL)); /* an update keeps the node's place */
    update(c, s);
    cr_expect_str_eq(order(s), "zeta,alpha,mid");
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, interleaves_zones_round_robin)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("a1", "a"));
    add_node(c, mknode("a2", "a"));
    add_node(c, mknode("b1", "b"));
    add_node(c, mknode("a3", "a"));
    add_node(c, mknode("c1", "c"));
    add_node(c, mknode("b2", "b"));
    update(c, s);
    /* zones in order of first appearance: a, b, c; one node of each per round. */
    cr_expect_str_eq(order(s), "a1,b1,c1,a2,b2,a3");
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, keeps_a_zone_in_place_while_it_has_nodes)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("a1", "a"));
    add_node(c, mknode("b1", "b"));
    add_node(c, mknode("a2", "a"));
    cr_assert_eq(ks__cache_remove_node(c, sym("a1")), 0);
    update(c, s);
    /* Zone a was created before b and still has a2. */
    cr_expect_str_eq(order(s), "a2,b1");
    /* Emptied, a zone is dropped and comes back last. */
    cr_assert_eq(ks__cache_remove_node(c, sym("a2")), 0);
    add_node(c, mknode("b2", "b"));
    add_node(c, mknode("a3", "a"));
    update(c, s);
    cr_expect_str_eq(order(s), "b1,a3,b2");
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, treats_nodes_without_zone_labels_as_one_zone)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("x1", NULL));
    add_node(c, mknode("a1", "a"));
    add_node(c, mknode("x2", NULL));
    add_node(c, mknode("a2", "a"));
    add_node(c, mknode("x3", NULL));
    update(c, s);
    cr_expect_str_eq(order(s), "x1,a1,x2,a2,x3");
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, keys_zones_by_region_and_zone)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    /* Same zone name in two regions: two zones. */
    add_node(
        c, mknode_labels("r1a",
                         "'topology.kubernetes.io/region':'r1','topology.kubernetes.io/zone':'a'"));
    add_node(
        c, mknode_labels("r1b",
                         "'topology.kubernetes.io/region':'r1','topology.kubernetes.io/zone':'a'"));
    add_node(
        c, mknode_labels("r2a",
                         "'topology.kubernetes.io/region':'r2','topology.kubernetes.io/zone':'a'"));
    update(c, s);
    cr_expect_str_eq(order(s), "r1a,r2a,r1b");
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, reads_the_deprecated_zone_labels_first)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    /* upstream GetZoneKey prefers failure-domain.beta.kubernetes.io/{zone,region}. */
    add_node(c, mknode_labels("a1", "'failure-domain.beta.kubernetes.io/zone':'a'"));
    add_node(c,
             mknode_labels(
                 "a2",
                 "'failure-domain.beta.kubernetes.io/zone':'a','topology.kubernetes.io/zone':'b'"));
    add_node(c, mknode("b1", "b"));
    update(c, s);
    cr_expect_str_eq(order(s), "a1,b1,a2");
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, treats_empty_zone_labels_as_no_zone)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("x1", NULL));
    add_node(c, mknode("e1", ""));
    add_node(c, mknode("a1", "a"));
    update(c, s);
    /* x1 and e1 share the zone "": x1, a1, e1. */
    cr_expect_str_eq(order(s), "x1,a1,e1");
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, orders_nodes_by_node_arrival_not_pod_arrival)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_pod(c, mkpod("early", "n3", "100m", NULL)); /* n3's pod arrives before its Node */
    add_node(c, mknode("n2", NULL));
    add_node(c, mknode("n3", NULL));
    update(c, s);
    cr_expect_str_eq(order(s), "n1,n2,n3");
    cr_expect_eq(find(s, "n3")->npods, 1);
    cr_expect_eq(find(s, "n3")->requested.pub.milli_cpu, 100);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, moves_a_node_whose_zone_changed_to_the_end_of_its_zone)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("a1", "a"));
    add_node(c, mknode("b1", "b"));
    add_node(c, mknode("b2", "b"));
    add_node(c, mknode("a2", "a"));
    add_node(c, mknode("a1", "b")); /* a1 moves to zone b */
    add_node(c, mknode("c1", "c"));
    update(c, s);
    /* nodeTree: zones a, b, c (a was created first and never emptied); a [a2], b [b1 b2 a1],
     * c [c1]. */
    cr_expect_str_eq(order(s), "a2,b1,c1,b2,a1");
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, rebuilds_the_list_when_nodes_come_and_go)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_node(c, mknode("n2", NULL));
    update(c, s);
    cr_expect_eq(s->nnodes, 2);
    add_node(c, mknode("n3", NULL));
    update(c, s);
    cr_expect_str_eq(order(s), "n1,n2,n3");
    cr_expect_eq(ks__cache_remove_node(c, sym("n2")), 0);
    cr_expect_eq(ks__cache_remove_node(c, sym("n2")), KS_ENOTFOUND);
    cr_expect_eq(ks__cache_remove_node(c, sym("never")), KS_ENOTFOUND);
    update(c, s);
    cr_expect_str_eq(order(s), "n1,n3");
    cr_expect_null(find(s, "n2"));
    cr_expect_not_null(find(s, "n3"));
    add_node(c, mknode("n2", NULL)); /* back at the end */
    update(c, s);
    cr_expect_str_eq(order(s), "n1,n3,n2");
    cr_expect_eq(counts(c).nodes, 3);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, keeps_pods_of_a_removed_node_until_they_go)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_node(c, mknode("n2", NULL));
    add_pod(c, mkpod("p1", "n1", "1", NULL));
    add_pod(c, mkpod("p2", "n1", "1", NULL));
    update(c, s);
    cr_expect_eq(ks__cache_remove_node(c, sym("n1")), 0);
    ks_cache_counts k = counts(c);
    cr_expect_eq(k.nodes, 1);
    cr_expect_eq(k.pods, 2, "its pods stay in the cache");
    update(c, s);
    cr_expect_str_eq(order(s), "n2");
    cr_expect_null(find(s, "n1"));
    /* A pod changing there while the node is gone is fine. */
    cr_expect_eq(ks__cache_remove_pod(c, "p1"), 0);
    update(c, s);
    cr_expect_null(find(s, "n1"));
    /* The node coming back finds its remaining pod. */
    add_node(c, mknode("n1", NULL));
    update(c, s);
    cr_expect_str_eq(order(s), "n2,n1");
    cr_assert_not_null(find(s, "n1"));
    cr_expect_eq(find(s, "n1")->npods, 1);
    cr_expect_eq(find(s, "n1")->requested.pub.milli_cpu, 1000);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, drops_a_removed_node_once_its_last_pod_goes)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_pod(c, mkpod("p1", "n1", "1", NULL));
    cr_expect_eq(ks__cache_remove_node(c, sym("n1")), 0);
    cr_expect_eq(ks__cache_remove_pod(c, "p1"), 0);
    cr_expect_eq(ks__cache_remove_node(c, sym("n1")), KS_ENOTFOUND);
    ks_cache_counts k = counts(c);
    cr_expect_eq(k.nodes, 0);
    cr_expect_eq(k.pods, 0);
    /* Back as a new node: empty. */
    add_node(c, mknode("n1", NULL));
    update(c, s);
    cr_assert_not_null(find(s, "n1"));
    cr_expect_eq(find(s, "n1")->npods, 0);
    cr_expect_eq(find(s, "n1")->requested.pub.milli_cpu, 0);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, lists_only_nodes_with_a_node_object)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_pod(c, mkpod("p1", "ghost", "1", NULL));
    update(c, s);
    cr_expect_str_eq(order(s), "n1");
    cr_expect_null(find(s, "ghost"));
    cr_expect_eq(counts(c).nodes, 1);
    cr_expect_eq(counts(c).pods, 1);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, shows_a_replaced_node_object_in_the_snapshot)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_pod(c, mkpod("p1", "n1", "1", NULL));
    update(c, s);
    const ks_node_info *ni = find(s, "n1");
    ks_node *n = mknode_labels("n1", "'disk':'ssd'");
    ks_node *old = ni->node;
    cr_assert_eq(ks__cache_add_node(c, n), 0);
    update(c, s);
    cr_expect_eq(find(s, "n1"), ni);
    cr_expect_eq(ni->node, n);
    cr_expect_neq(ni->node, old);
    cr_expect_eq(ni->npods, 1, "replacing the Node keeps its pods");
    ks__node_unref(n);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, builds_an_empty_snapshot)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    update(c, s);
    cr_expect_eq(s->nnodes, 0);
    cr_expect_null(find(s, "n1"));
    add_node(c, mknode("n1", NULL));
    update(c, s);
    cr_expect_eq(s->nnodes, 1);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, serves_two_snapshots_independently)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s1 = ks__snapshot_new(), *s2 = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    update(c, s1);
    add_pod(c, mkpod("p1", "n1", "1", NULL));
    update(c, s2);
    cr_expect_eq(find(s1, "n1")->npods, 0);
    cr_expect_eq(find(s2, "n1")->npods, 1);
    update(c, s1);
    cr_expect_eq(find(s1, "n1")->npods, 1);
    ks__snapshot_free(s1);
    ks__snapshot_free(s2);
    ks__cache_free(c);
}

/* ---- NodeInfo helpers --------------------------------------------------------------------- */

Test(cache, clones_a_node_info_deeply)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    add_pod(c, mkpod("p1", "n1", "1", "1Gi"));
    update(c, s);
    const ks_node_info *orig = find(s, "n1");
    ks_node_info *copy = ks__node_info_clone(orig);
    cr_assert_not_null(copy);
    cr_expect_neq(copy->pods, orig->pods);
    cr_expect_eq(copy->node, orig->node);
    cr_expect_eq(copy->name, orig->name);

    /* Dry-run edits touch only the clone. */
    ks_pod *extra = mkpod("p2", "n1", "500m", NULL);
    cr_expect_eq(ks__node_info_add_pod(copy, extra), 0);
    ks__pod_unref(extra);
    cr_expect_eq(copy->npods, 2);
    cr_expect_eq(copy->requested.pub.milli_cpu, 1500);
    cr_expect_eq(copy->nonzero_requested.pub.memory, 1024 * MI + 200 * MI);
    cr_expect_eq(orig->npods, 1);
    cr_expect_eq(orig->requested.pub.milli_cpu, 1000);
    cr_expect_eq(ks__node_info_remove_pod(copy, "p1"), 0);
    cr_expect_eq(ks__node_info_remove_pod(copy, "p1"), KS_ENOTFOUND);
    cr_expect_eq(copy->npods, 1);
    cr_expect_eq(copy->requested.pub.milli_cpu, 500);
    cr_expect_eq(copy->requested.pub.memory, 0);
    cr_expect_eq(orig->requested.pub.memory, 1024 * MI);
    ks__node_info_free(copy);
    ks__node_info_free(NULL);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

Test(cache, sums_extended_resources_per_node)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    char err[256];
    add_node(c, mknode("n1", NULL));
    const char *texts[] = {
        "{\"metadata\":{\"name\":\"a\",\"uid\":\"a\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":"
        "[{\"name\":\"c\","
        "\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"2\",\"example.com/foo\":\"1\"}}}]}}",
        "{\"metadata\":{\"name\":\"b\",\"uid\":\"b\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":"
        "[{\"name\":\"c\","
        "\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
    };
    for (int i = 0; i < 2; i++) {
        ks_pod *p = NULL;
        cJSON *obj = cJSON_Parse(texts[i]);
        cr_assert_eq(ks__pod_from_json(obj, &p, err, sizeof(err)), 0, "%s", err);
        cJSON_Delete(obj);
        add_pod(c, p);
    }
    update(c, s);
    const ks_resources *r = &find(s, "n1")->requested.pub;
    cr_expect_eq(ks_resources_scalar(r, sym("nvidia.com/gpu")), 3);
    cr_expect_eq(ks_resources_scalar(r, sym("example.com/foo")), 1);
    cr_expect_eq(ks__cache_remove_pod(c, "a"), 0);
    update(c, s);
    r = &find(s, "n1")->requested.pub;
    cr_expect_eq(ks_resources_scalar(r, sym("nvidia.com/gpu")), 1);
    cr_expect_eq(ks_resources_scalar(r, sym("example.com/foo")), 0);
    ks__snapshot_free(s);
    ks__cache_free(c);
}

/* upstream NodeInfo.UsedPorts is a set: when one of two pods on the same host port goes, the port
 * is free (a quirk kept on purpose; the differential test met it in a preemption dry run). */
Test(cache, removing_one_of_two_pods_on_a_host_port_frees_it)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    add_node(c, mknode("n1", NULL));
    for (int i = 0; i < 2; i++) {
        char text[512], err[256], uid[8];
        ks_pod *p = NULL;
        snprintf(uid, sizeof(uid), "p%d", i);
        snprintf(text, sizeof(text),
                 "{'metadata':{'name':'%s','namespace':'ns','uid':'%s'},'spec':{'nodeName':'n1',"
                 "'containers':[{'name':'c','ports':[{'containerPort':80,'hostPort':9000%s}]}]}}",
                 uid, uid, i ? ",'hostIP':'0.0.0.0','protocol':'TCP'" : "");
        cJSON *obj = th_json(text);
        cr_assert_eq(ks__pod_from_json(obj, &p, err, sizeof(err)), 0, "%s", err);
        cJSON_Delete(obj);
        add_pod(c, p);
    }
    update(c, s);
    cr_assert_eq(find(s, "n1")->nports, 2);
    cr_assert_eq(ks__cache_remove_pod(c, "p0"), 0);
    update(c, s);
    cr_assert_eq(find(s, "n1")->nports, 0, "the other pod's port 9000 is free too, as upstream");
    ks__snapshot_free(s);
    ks__cache_free(c);
}
