/* ImageLocality: upstream imagelocality/image_locality_test.go (TestImageLocalityPriority,
 * TestNormalizedImageName, v1.37 with image volumes) plus spread over nodes that are not scored,
 * duplicate images, and the one cluster-wide size per image name of upstream's cache. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "sched/cache.h"
#include "harness.h"

extern const ks_plugin_desc ks_plugin_image_locality;

TestSuite(image_locality, .init = th_init, .fini = th_fini);

#define MB (1024LL * 1024LL)

static int seq;

/* A pod with regular containers `images` ("a,b") and init containers `init` (may be NULL). */
static ks_pod *pod(const char *images, const char *init)
{
    char json[4096], cs[2048] = "", is[1024] = "", copy[1024], *save = NULL;
    int i = 0;
    snprintf(copy, sizeof(copy), "%s", images);
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save), i++)
        snprintf(cs + strlen(cs), sizeof(cs) - strlen(cs), "%s{'name':'c%d','image':'%s'}",
                 i ? "," : "", i, t);
    if (init) {
        snprintf(copy, sizeof(copy), "%s", init);
        i = 0;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save), i++)
            snprintf(is + strlen(is), sizeof(is) - strlen(is), "%s{'name':'i%d','image':'%s'}",
                     i ? "," : "", i, t);
    }
    seq++;
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p%d','namespace':'default','uid':'p%d'},"
             "'spec':{'initContainers':[%s],'containers':[%s]}}",
             seq, seq, is, cs);
    return th_pod(json);
}

/* One image entry: names (JSON strings) and a size in MiB. */
#define IMG(names, mb) "{'names':[" names "],'sizeBytes':" #mb "}"

static void add_node(th_cluster *c, const char *name, const char *images_mb)
{
    char json[4096], imgs[2048] = "";
    /* images_mb uses sizes in MiB; the JSON needs bytes: rewrite each 'sizeBytes':N. */
    const char *p = images_mb;
    size_t at = 0;
    while (*p && at + 32 < sizeof(imgs)) {
        const char *k = strstr(p, "'sizeBytes':");
        if (!k) {
            at += (size_t)snprintf(imgs + at, sizeof(imgs) - at, "%s", p);
            break;
        }
        k += strlen("'sizeBytes':");
        at += (size_t)snprintf(imgs + at, sizeof(imgs) - at, "%.*s", (int)(k - p), p);
        long long mb = strtoll(k, (char **)&p, 10);
        at += (size_t)snprintf(imgs + at, sizeof(imgs) - at, "%lld", mb * MB);
    }
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s'},'status':{'allocatable':{'cpu':'4','memory':'8Gi',"
             "'pods':'110'},'images':[%s]}}",
             name, imgs);
    th_cluster_add_node(c, json);
}

#define NODE_40_300_2000                                                                           \
    IMG("'gcr.io/40:latest','gcr.io/40:v1','gcr.io/40:v1'", 40)                                    \
    "," IMG("'gcr.io/300:latest','gcr.io/300:v1'", 300) "," IMG("'gcr.io/2000:latest'", 2000)
#define NODE_250_10 IMG("'gcr.io/250:latest'", 250) "," IMG("'gcr.io/10:latest','gcr.io/10:v1'", 10)
#define NODE_600_40_900                                                                            \
    IMG("'gcr.io/600:latest'", 600)                                                                \
    "," IMG("'gcr.io/40:latest'", 40) "," IMG("'gcr.io/900:latest'", 900)
#define NODE_300_600_900                                                                           \
    IMG("'gcr.io/300:latest'", 300)                                                                \
    "," IMG("'gcr.io/600:latest'", 600) "," IMG("'gcr.io/900:latest'", 900)
#define NODE_4000_30 IMG("'gcr.io/4000:latest'", 4000) "," IMG("'gcr.io/30:latest'", 30)
#define NODE_20_30_40                                                                              \
    IMG("'gcr.io/20:latest'", 20)                                                                  \
    "," IMG("'gcr.io/30:latest'", 30) "," IMG("'gcr.io/40:latest'", 40)

static void expect(ks_pod *p, const char *const *nodes, size_t n, const int64_t *want)
{
    int64_t raw[8], norm[8];
    char name[16];
    th_plugin *pl = th_plugin_new(&ks_plugin_image_locality, NULL);
    th_cluster *c = th_cluster_new();
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "node%zu", i + 1);
        add_node(c, name, nodes[i]);
    }
    cr_assert_eq(th_score(pl, c, p, raw, norm), KS_SUCCESS);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(raw[i], want[i], "node%zu: raw %lld, want %lld", i + 1, (long long)raw[i],
                     (long long)want[i]);
        cr_assert_eq(norm[i], want[i], "no NormalizeScore");
    }
}

Test(image_locality, prefers_node_with_larger_image)
{
    /* node1: 40M/2 < 23M -> 0; node2: 100 * (250M/2 - 23M) / (2000M - 23M) = 5. */
    const char *nodes[] = {NODE_40_300_2000, NODE_250_10};
    expect(pod("gcr.io/40,gcr.io/250", NULL), nodes, 2, (int64_t[]){0, 5});
}

Test(image_locality, prefers_node_with_both_images)
{
    const char *nodes[] = {NODE_40_300_2000, NODE_250_10};
    expect(pod("gcr.io/40,gcr.io/300", NULL), nodes, 2, (int64_t[]){7, 0});
}

Test(image_locality, clamps_to_max_threshold)
{
    const char *nodes[] = {NODE_4000_30, NODE_250_10};
    expect(pod("gcr.io/10,gcr.io/4000", NULL), nodes, 2, (int64_t[]){100, 0});
}

Test(image_locality, spread_counts_nodes_without_images)
{
    /* 4000M * 1/3 = 1333M -> 100 * (1333M - 23M) / (2000M - 23M) = 66. */
    const char *nodes[] = {NODE_4000_30, NODE_250_10, ""};
    expect(pod("gcr.io/10,gcr.io/4000", NULL), nodes, 3, (int64_t[]){66, 0, 0});
}

Test(image_locality, multiple_large_images)
{
    const char *nodes[] = {NODE_600_40_900, NODE_300_600_900, ""};
    expect(pod("gcr.io/300,gcr.io/600,gcr.io/900", NULL), nodes, 3, (int64_t[]){32, 36, 0});
}

Test(image_locality, multiple_small_images)
{
    const char *nodes[] = {NODE_20_30_40, NODE_4000_30};
    expect(pod("gcr.io/30,gcr.io/40", NULL), nodes, 2, (int64_t[]){1, 0});
}

Test(image_locality, counts_init_container_images)
{
    /* 100 * (300M/2 - 23M) / (2 * 1000M - 23M) = 6: the init container counts in both sums. */
    const char *nodes[] = {NODE_40_300_2000, NODE_20_30_40};
    expect(pod("gcr.io/30", "gcr.io/300"), nodes, 2, (int64_t[]){6, 0});
}

Test(image_locality, tagged_and_digest_references_are_kept)
{
    /* gcr.io/40:v1 is listed as is; no ":latest" is appended to a tagged reference. */
    const char *nodes[] = {IMG("'gcr.io/big:v1'", 900) "," IMG("'root@sha256:0123'", 900), ""};
    /* 900M/2 = 450M each; (900M - 23M) / (2000M - 23M) = 44. */
    expect(pod("gcr.io/big:v1,root@sha256:0123", NULL), nodes, 2, (int64_t[]){44, 0});
}

Test(image_locality, registry_port_is_not_a_tag)
{
    const char *nodes[] = {IMG("'gcr.io:5000/root:latest'", 1000), ""};
    /* gcr.io:5000/root -> gcr.io:5000/root:latest: 1000M/2 = 500M -> 100 * 477 / 977 = 48. */
    expect(pod("gcr.io:5000/root", NULL), nodes, 2, (int64_t[]){48, 0});
}

Test(image_locality, no_docker_io_prefixing)
{
    const char *nodes[] = {IMG("'docker.io/library/nginx:latest'", 1000), ""};
    expect(pod("nginx", NULL), nodes, 2, (int64_t[]){0, 0});
}

Test(image_locality, same_image_in_two_containers_counts_twice)
{
    /* 2 * 600M/2 = 600M over 2 containers: 100 * (600M - 23M) / (2000M - 23M) = 29. */
    const char *nodes[] = {IMG("'app:latest'", 600), ""};
    expect(pod("app,app", NULL), nodes, 2, (int64_t[]){29, 0});
}

Test(image_locality, image_on_every_node_is_not_scaled_down)
{
    /* 500M * 2/2 = 500M: 100 * 477 / 977 = 48 on both. */
    const char *nodes[] = {IMG("'app:latest'", 500), IMG("'app:latest'", 500)};
    expect(pod("app", NULL), nodes, 2, (int64_t[]){48, 48});
}

Test(image_locality, pod_without_images_scores_zero)
{
    const char *nodes[] = {NODE_250_10, ""};
    expect(th_pod("{'metadata':{'name':'x','namespace':'default','uid':'x'},'spec':{}}"), nodes, 2,
           (int64_t[]){0, 0});
}

/* v1.37 (upstream "pod with ImageVolume"): an image volume's reference counts like a container
 * image, and raises imageCount: gcr.io/30 + volume gcr.io/300: node1 has gcr.io/300:latest:
 * 100 * (300M * 1/2 - 23M) / (1000M * 2 - 23M) = 6; node2 30M/2 < 23M -> 0. */
static ks_pod *pod_with_volumes(const char *image, const char *volumes)
{
    char json[2048];
    seq++;
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p%d','namespace':'default','uid':'p%d'},"
             "'spec':{'containers':[{'name':'c','image':'%s'}],'volumes':[%s]}}",
             seq, seq, image, volumes);
    return th_pod(json);
}

Test(image_locality, image_volume_counts_like_a_container_image)
{
    const char *nodes[] = {NODE_300_600_900, NODE_4000_30};
    expect(pod_with_volumes("gcr.io/30", "{'name':'v','image':{'reference':'gcr.io/300'}}"), nodes,
           2, (int64_t[]){6, 0});
    /* The same images as regular containers score the same. */
    expect(pod("gcr.io/30,gcr.io/300", NULL), nodes, 2, (int64_t[]){6, 0});
}

Test(image_locality, image_volume_raises_the_max_threshold)
{
    /* app:latest 1500M on both nodes: with one container the sum 1500M clamps to 1000M -> 100;
     * with an image volume that no node has, imageCount 2: 100 * (1500M - 23M) / (2000M - 23M)
     * = 74. Other volumes do not count. */
    const char *nodes[] = {IMG("'app:latest'", 1500), IMG("'app:latest'", 1500)};
    expect(pod("app", NULL), nodes, 2, (int64_t[]){100, 100});
    expect(pod_with_volumes("app", "{'name':'e','emptyDir':{}},"
                                   "{'name':'m','image':{'reference':'models/llm:v1'}}"),
           nodes, 2, (int64_t[]){74, 74});
}

Test(image_locality, image_volume_reference_is_normalized)
{
    /* "data" -> "data:latest", found on node1 only: 800M/2 = 400M over imageCount 2 ->
     * 100 * (400M - 23M) / (2000M - 23M) = 19. */
    const char *nodes[] = {IMG("'data:latest'", 800), ""};
    expect(pod_with_volumes("gcr.io/none:v9", "{'name':'d','image':{'reference':'data'}}"), nodes,
           2, (int64_t[]){19, 0});
}

/* ---- one size per image name (upstream cacheImpl.imageStates) ------------------------------ */

/* Upstream scores an image with the size its cache keeps for the name, which is what the Node
 * that listed the name first reported (while no other Node listed it), on every node; not each
 * node's own status.images figure. app:latest on both nodes: spread 1; node1 (added first) says
 * 1000 MiB, node2 200 MiB: both score 100 (node2 alone would give 100 * 177 / 977 = 18). */
Test(image_locality, image_size_is_the_first_reporting_nodes_on_every_node)
{
    const char *big_first[] = {IMG("'app:latest'", 1000), IMG("'app:latest'", 200)};
    expect(pod("app", NULL), big_first, 2, (int64_t[]){100, 100});
    const char *small_first[] = {IMG("'app:latest'", 200), IMG("'app:latest'", 1000)};
    expect(pod("app", NULL), small_first, 2, (int64_t[]){18, 18});
}

static ks_node *image_node(const char *name, int mb)
{
    char json[512];
    if (mb)
        snprintf(json, sizeof(json),
                 "{'metadata':{'name':'%s'},'status':{'images':[{'names':['app:latest'],"
                 "'sizeBytes':%lld}]}}",
                 name, (long long)mb * MB);
    else
        snprintf(json, sizeof(json), "{'metadata':{'name':'%s'},'status':{}}", name);
    return th_node(json);
}

static int64_t cached_size(ks_cache *c, ks_snapshot *s)
{
    cr_assert_eq(ks__cache_update_snapshot(c, s), 0);
    return ks__snapshot_image_size(s, ks_intern("app:latest"));
}

/* addNodeImageStates / removeNodeImageStates: the size stays while any Node lists the name, and
 * is taken anew once none did. */
Test(image_locality, cached_image_size_follows_node_updates_and_removals)
{
    ks_cache *c = ks__cache_new();
    ks_snapshot *s = ks__snapshot_new();
    cr_assert_eq(ks__cache_add_node(c, image_node("a", 1000)), 0);
    cr_assert_eq(ks__cache_add_node(c, image_node("b", 200)), 0);
    cr_assert_eq(cached_size(c, s), 1000 * MB);
    /* a drops the image, then lists it again with another size: b kept the entry alive. */
    cr_assert_eq(ks__cache_add_node(c, image_node("a", 0)), 0);
    cr_assert_eq(cached_size(c, s), 1000 * MB);
    cr_assert_eq(ks__cache_add_node(c, image_node("a", 300)), 0);
    cr_assert_eq(cached_size(c, s), 1000 * MB);
    /* Once no Node lists it, the next one sets the size. */
    cr_assert_eq(ks__cache_remove_node(c, ks_intern("a")), 0);
    cr_assert_eq(ks__cache_remove_node(c, ks_intern("b")), 0);
    cr_assert_eq(cached_size(c, s), -1);
    cr_assert_eq(ks__cache_add_node(c, image_node("b", 200)), 0);
    cr_assert_eq(cached_size(c, s), 200 * MB);
    /* A node that is the only one listing the name and changes its size takes the new one. */
    cr_assert_eq(ks__cache_add_node(c, image_node("b", 250)), 0);
    cr_assert_eq(cached_size(c, s), 250 * MB);
    ks__snapshot_free(s);
    ks__cache_free(c);
}
