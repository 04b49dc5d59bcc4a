/*
 * ImageLocality (upstream plugins/imagelocality/image_locality.go, v1.37).
 *
 *   PreScore  for each init and regular container image (in that order), then each image volume's
 *             reference (spec.volumes[].image.reference, v1.37), the normalized name
 *             (":latest" appended when the reference has no tag after its last '/'; no registry or
 *             "library/" prefixing, as upstream) looked up among interned names, and its spread:
 *             the number of snapshot nodes listing that name over the number of snapshot nodes,
 *             and its size: one size per name for the whole cluster (upstream's cache keeps the
 *             size of the Node that listed the name first while no other did,
 *             ks_snapshot_image_size), not each node's own status.images figure.
 *   Score     sum over the containers and image volumes whose image the node lists of
 *             int64(size * spread), clamped to [23 MiB, 1000 MiB * imageCount] (imageCount = init
 *             containers + containers + image volumes) and scaled to 0..100 (integer arithmetic
 *             as upstream). Only id comparisons here; no NormalizeScore.
 */
#include <string.h>

#include "kubesched/plugin.h"
#include "../common/sign.h"

#define MB (1024LL * 1024LL)
#define MIN_THRESHOLD (23 * MB)
#define MAX_CONTAINER_THRESHOLD (1000 * MB)

typedef struct wanted_image {
    ks_sym name;   /* normalized; KS_SYM_ABSENT when no node can list it */
    double spread; /* numNodes / totalNumNodes */
    int64_t size;  /* ImageStateSummary.Size: the same on every node that lists the name */
} wanted_image;

/* PreScore state (cycle arena; read-only after PreScore, shared by clones). */
typedef struct prescore_state {
    size_t nimages; /* upstream's imageCount: container images, then image volumes */
    wanted_image images[];
} prescore_state;

static char prescore_key;

/* normalizedImageName: "name" -> "name:latest" unless the last ':' comes after the last '/'. The
 * result is only looked up: a name no node reported was never interned, and cannot match. */
static ks_sym normalized(ks_sym image)
{
    const char *s = ks_sym_str(image);
    if (!s)
        return KS_SYM_ABSENT;
    const char *colon = strrchr(s, ':'), *slash = strrchr(s, '/');
    if (colon && (!slash || colon > slash))
        return image;
    size_t len = strlen(s);
    char stack[256];
    char *buf =
        len + sizeof(":latest") <= sizeof(stack) ? stack : ks_alloc(len + sizeof(":latest"));
    if (!buf)
        return KS_SYM_ABSENT;
    memcpy(buf, s, len);
    memcpy(buf + len, ":latest", sizeof(":latest"));
    ks_sym sym = ks_sym_lookup(buf);
    if (buf != stack)
        ks_free(buf);
    return sym;
}

/* pre_score: scheduling thread, once per cycle. */
static ks_code image_locality_pre_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                                        const ks_node_info *const *nodes, size_t nnodes,
                                        ks_status *st)
{
    (void)self;
    (void)nodes;
    (void)nnodes;
    const ks_sym *images, *volumes;
    size_t ncont = ks_pod_images(pod, &images);
    size_t nvol = ks_pod_image_volumes(pod, &volumes);
    size_t n = ncont + nvol;
    const ks_snapshot *snap = ks_cycle_snapshot(cycle);
    size_t total = ks_snapshot_node_count(snap);
    prescore_state *s = ks_cycle_alloc(cycle, sizeof(*s) + n * sizeof(s->images[0]));
    if (!s) {
        ks_status_reason(st, "ImageLocality: out of memory in PreScore");
        return KS_ERROR;
    }
    s->nimages = n;
    for (size_t i = 0; i < n; i++) {
        ks_sym name = normalized(i < ncont ? images[i] : volumes[i - ncont]);
        size_t on = name == KS_SYM_ABSENT ? 0 : ks_snapshot_image_node_count(snap, name);
        s->images[i].name = on ? name : KS_SYM_ABSENT;
        s->images[i].spread = on ? (double)on / (double)total : 0.0;
        s->images[i].size = on ? ks_snapshot_image_size(snap, name) : 0;
    }
    if (ks_cycle_write(cycle, &prescore_key, s, NULL) != 0) {
        ks_status_reason(st, "ImageLocality: cannot write the PreScore state");
        return KS_ERROR;
    }
    return KS_SUCCESS;
}

/* Whether the node lists name (its NodeInfo.ImageStates has the name). */
static int node_lists(const ks_node_image *imgs, size_t n, ks_sym name)
{
    for (size_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < imgs[i].nnames; k++)
            if (imgs[i].names[k] == name)
                return 1;
    return 0;
}

/* calculatePriority: the sum clamped to [min, max] and scaled to 0..100. */
static int64_t priority(int64_t sum, size_t nimages)
{
    int64_t max = MAX_CONTAINER_THRESHOLD * (int64_t)nimages;
    if (sum < MIN_THRESHOLD)
        sum = MIN_THRESHOLD;
    else if (sum > max)
        sum = max;
    return KS_MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / (max - MIN_THRESHOLD);
}

/* score: called concurrently for different nodes; the PreScore state is read-only here. */
static ks_code image_locality_score(void *self, ks_cycle *cycle, const ks_pod *pod,
                                    const ks_node_info *ni, int64_t *score, ks_status *st)
{
    (void)self;
    (void)pod;
    const prescore_state *s = ks_cycle_read(cycle, &prescore_key);
    if (!s) {
        ks_status_reason(st, "reading \"PreScoreImageLocality\" from cycleState: not found");
        return KS_ERROR;
    }
    const ks_node_image *imgs;
    size_t nimgs = ks_node_images(ks_node_info_node(ni), &imgs);
    int64_t sum = 0;
    for (size_t i = 0; nimgs && i < s->nimages; i++) {
        if (s->images[i].name == KS_SYM_ABSENT)
            continue;
        if (node_lists(imgs, nimgs, s->images[i].name)) /* scaledImageScore */
            sum += (int64_t)((double)s->images[i].size * s->images[i].spread);
    }
    *score = priority(sum, s->nimages);
    return KS_SUCCESS;
}

/* ImageLocality.SignPod: the normalized image names of the init and regular containers and of the
 * image volumes, sorted. Upstream signs the set of container image names only, but Score also
 * counts each container and image volume (imageCount sets the max threshold), so two pods with
 * the same set and different counts score differently: kubesched keeps every name (a multiset)
 * and the volumes, so a batched decision is always the one a full cycle would make. */
static ks_code image_locality_sign(void *self, const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    (void)self;
    const ks_sym *images, *volumes;
    size_t ncont = ks_pod_images(pod, &images);
    size_t n = ncont + ks_pod_image_volumes(pod, &volumes);
    ks_jbuf b = {0};
    char **names = (char **)calloc(n ? n : 1, sizeof(*names));
    if (!names)
        b.oom = 1;
    for (size_t i = 0; names && i < n; i++) {
        const char *s = ks_sign_sym(i < ncont ? images[i] : volumes[i - ncont]);
        const char *colon = strrchr(s, ':'), *slash = strrchr(s, '/');
        size_t len = strlen(s);
        names[i] = (char *)malloc(len + sizeof(":latest"));
        if (!names[i]) {
            b.oom = 1;
            continue;
        }
        memcpy(names[i], s, len + 1);
        if (!(colon && (!slash || colon > slash))) /* normalizedImageName */
            memcpy(names[i] + len, ":latest", sizeof(":latest"));
    }
    if (names && !b.oom)
        qsort(names, n, sizeof(*names), ks_sign_strcmp);
    ks_jb_put(&b, "[");
    for (size_t i = 0; names && !b.oom && i < n; i++) {
        if (i)
            ks_jb_put(&b, ",");
        ks_jb_str(&b, names[i]);
    }
    ks_jb_put(&b, "]");
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
    return ks_jb_sign(&b, sig, KS_SIGN_IMAGE_NAMES, st);
}

const ks_plugin_desc ks_plugin_image_locality = {
    .size = sizeof(ks_plugin_desc),
    .name = "ImageLocality",
    .pre_score = image_locality_pre_score,
    .score = image_locality_score,
    .sign = image_locality_sign,
};
