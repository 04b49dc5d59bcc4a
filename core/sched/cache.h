/*
 * The scheduler cache and its per-cycle snapshot (upstream backend/cache).
 *
 * The cache holds every Node and every assigned Pod (bound, or assumed by the scheduler and not
 * yet confirmed), aggregated per node into a NodeInfo (requested and non-zero requested
 * resources, pod list) that carries a generation. The snapshot is the scheduling thread's private
 * copy; ks__cache_update_snapshot copies only the NodeInfos whose generation is newer than the
 * snapshot's, so a cycle costs O(changed nodes), not O(cluster).
 *
 * Threads: cache functions lock the cache's mutex and may be called from any thread (watch
 * threads, binding threads, the scheduling thread). A snapshot belongs to the scheduling thread;
 * during a cycle it is read concurrently by the Filter/Score workers and never written.
 */
#ifndef KS_CORE_CACHE_H
#define KS_CORE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "api/objects.h"

struct ks_node_info {
    ks_node *node; /* one reference; NULL for a node known only through its pods */
    ks_sym name;
    ks_pod **pods; /* one reference each */
    size_t npods, cap;
    ks__resources requested;
    ks__resources nonzero_requested;
    uint64_t generation;
    uint32_t snap_index; /* position in the snapshot's node list (snapshot copies only) */
    /* Host ports in use (upstream UsedPorts), one entry per pod port; pods with pod
     * (anti-)affinity and with required anti-affinity (upstream PodsWithAffinity /
     * PodsWithRequiredAntiAffinity). Borrowed pointers into pods[]. */
    ks_host_port *ports;
    size_t nports, ports_cap;
    const ks_pod **with_affinity;
    size_t naffinity, affinity_cap;
    const ks_pod **with_anti;
    size_t nanti, anti_cap;
    /* The same pods grouped by namespace (groups sorted by namespace id), so that plugins that
     * count pods of one namespace (PodTopologySpread) touch only those. */
    const ks_pod **ns_pods;
    size_t ns_pods_cap;
    struct ks_ns_group {
        ks_sym ns;
        uint32_t start, count;
    } *ns_groups;
    size_t nns_groups, ns_groups_cap;
};

typedef struct ks_cache ks_cache;

ks_cache *ks__cache_new(void);
void ks__cache_free(ks_cache *c); /* NULL is a no-op */

/* Nodes: add or replace by name (takes a reference), remove. */
int ks__cache_add_node(ks_cache *c, ks_node *node);
int ks__cache_remove_node(ks_cache *c, ks_sym name);

/* Pods with spec.nodeName (takes a reference). An add that matches an assumed pod (same uid)
 * confirms it. Update replaces by uid (moving it if nodeName changed); remove by uid. */
int ks__cache_add_pod(ks_cache *c, ks_pod *pod);
int ks__cache_update_pod(ks_cache *c, ks_pod *pod);
int ks__cache_remove_pod(ks_cache *c, const char *uid);

/* The scheduler's optimistic placement: pod (a copy with spec.nodeName set) counts on its node
 * from now on. Forget undoes it (binding failed); finish_binding marks the bind as done. */
int ks__cache_assume_pod(ks_cache *c, ks_pod *assumed);
int ks__cache_forget_pod(ks_cache *c, const char *uid);
int ks__cache_finish_binding(ks_cache *c, const char *uid);
int ks__cache_is_assumed(ks_cache *c, const char *uid);
/* Whether the pod of uid is on a node of the cache: bound, or assumed (being bound). */
int ks__cache_has_pod(ks_cache *c, const char *uid);

/* Every pod on the cache's nodes, as ks__cache_pods_matching hands them out. */
size_t ks__cache_pods_all(ks_cache *c, ks_pod ***out);
/* The pod of uid on a node of the cache (bound or assumed), with a reference, or NULL. */
ks_pod *ks__cache_get_pod(ks_cache *c, const char *uid);
/* The pods on the cache's nodes (bound or assumed) in namespace ns whose label key is value,
 * each with a reference for the caller, in *out (malloc'd; unref each, free it). Any thread. */
size_t ks__cache_pods_matching(ks_cache *c, ks_sym ns, ks_sym key, ks_sym value, ks_pod ***out);

typedef struct ks_cache_counts {
    size_t nodes, pods, assumed;
} ks_cache_counts;
void ks__cache_counts(ks_cache *c, ks_cache_counts *out);

/* ---- snapshot ------------------------------------------------------------------------------ */

struct ks_snapshot {
    ks_node_info **nodes; /* the node list in scheduling order (zones interleaved) */
    size_t nnodes, cap;
    uint64_t generation;
    /* name -> index, open addressing over ks_sym */
    uint32_t *index;
    size_t index_cap;
    int list_dirty; /* internal: rebuild on next update */
    /* image name -> number of listed nodes having it (ImageLocality), open addressing */
    struct ks_image_count {
        ks_sym image;
        uint32_t nodes, last_node;
        int64_t size; /* the cache's size for the name (upstream ImageStateSummary.Size) */
    } *images;
    size_t images_cap;
    uint64_t images_generation; /* internal: cache's node-object version last counted */
    /* Nodes with pods that have pod (anti-)affinity / required anti-affinity, snapshot order. */
    const ks_node_info **with_affinity, **with_anti;
    size_t nwith_affinity, nwith_anti;
    /* Change tracking for plugins (ks_snapshot_version / ks_snapshot_changed_nodes). */
    uint64_t version;    /* bumped at every node-list rebuild */
    uint64_t update_seq; /* bumped at every update */
    uint32_t *changed;   /* indexes changed by the last update */
    size_t nchanged, changed_cap;
    uint64_t list_generation; /* internal: cache's node-set version last listed */
};

ks_snapshot *ks__snapshot_new(void);
void ks__snapshot_free(ks_snapshot *s);
/* Brings s up to date with the cache. Only nodes with a Node object are listed. */
int ks__cache_update_snapshot(ks_cache *c, ks_snapshot *s);
const ks_node_info *ks__snapshot_find(const ks_snapshot *s, ks_sym name);
/* Number of listed nodes whose status.images name image. */
size_t ks__snapshot_image_nodes(const ks_snapshot *s, ks_sym image);
/* The size ImageLocality scores image with on every node that lists it (upstream
 * ImageStateSummary.Size): the size reported by the Node that listed the name first (cache
 * order) while no other Node did. -1 when no listed node has it. */
int64_t ks__snapshot_image_size(const ks_snapshot *s, ks_sym image);

/* Workload-aware preemption: pod (spec.nodeName set) joins / leaves the snapshot's copy of its
 * node, not the cache; the next ks__cache_update_snapshot rebuilds the snapshot from the cache
 * (upstream BackupSnapshot's restore). Scheduling thread, between cycles' Filter passes.
 * 0, KS_ENOTFOUND (no such node, or the pod is not on it), KS_ENOMEM. */
int ks__snapshot_add_pod(ks_snapshot *s, ks_pod *pod);
int ks__snapshot_remove_pod(ks_snapshot *s, const ks_pod *pod);

/* A deep copy of a NodeInfo (own arrays, pod references); for preemption dry runs and nominated
 * pods. Free with ks__node_info_free. */
ks_node_info *ks__node_info_clone(const ks_node_info *ni);
void ks__node_info_free(ks_node_info *ni);
/* Adds / removes a pod (by uid) from a NodeInfo, updating the sums. */
int ks__node_info_add_pod(ks_node_info *ni, ks_pod *pod);
int ks__node_info_remove_pod(ks_node_info *ni, const char *uid);

#endif
