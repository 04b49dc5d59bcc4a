/*
 * OnePodPerNode: an out-of-tree Filter plugin that spreads a profile's pods one per node. A node
 * passes only when none of the pods already on it was scheduled for the same profile (the same
 * spec.schedulerName) and, with args.labelKey, carries the same value of that label. It is what a
 * "pod-per-node" profile needs: agents, benchmarks, or anything that must not share a machine with
 * its siblings, without writing pod anti-affinity into every pod.
 *
 *   pluginConfig:
 *   - name: OnePodPerNode
 *     args:
 *       kubeschedPluginPath: one-pod-per-node/build/libone_pod_per_node.so
 *       labelKey: app          # optional: only pods with the same value of this label conflict
 *
 * Rejections are Unschedulable, not UnschedulableAndUnresolvable: the node becomes possible again
 * when the pod already on it goes away, and preemption may make it go away (its dry run removes
 * lower-priority pods from a copy of the node and filters again). The reason is one constant
 * string, so "0/N nodes are available: ..." counts nodes under it.
 *
 * Build it against the installed SDK only: see CMakeLists.txt next to this file and
 * examples/README.md.
 */
#include <stdio.h>
#include <string.h>

#include <kubesched/plugin.h>

#define PLUGIN_NAME "OnePodPerNode"

typedef struct one_pod_per_node {
    ks_sym label_key; /* KS_SYM_ABSENT: the profile alone decides */
    char reason[320];
} one_pod_per_node;

static void oppn_destroy(void *p) { ks_free(p); }

/* Main thread, once per profile that enables the plugin. */
static void *oppn_create(const ks_args *args, ks_error *err)
{
    one_pod_per_node *self = ks_alloc(sizeof(*self));
    const char *key;
    int rc;

    if (!self) {
        ks_error_set(err, "out of memory");
        return NULL;
    }
    memset(self, 0, sizeof(*self));
    self->label_key = KS_SYM_ABSENT;
    rc = ks_args_get_string(args, "labelKey", &key);
    if (rc == 0) {
        if (key[0] == '\0' || strlen(key) > 253 || strpbrk(key, " \t,=") != NULL) {
            ks_error_set(err,
                         "args.labelKey: \"%s\" is not a pod label key; use e.g. \"app\" "
                         "or \"example.com/role\"",
                         key);
            goto fail;
        }
        self->label_key = ks_intern(key);
        snprintf(self->reason, sizeof(self->reason),
                 "node(s) already had a pod of this profile with the same %s label", key);
    } else if (rc == KS_ENOTFOUND) {
        snprintf(self->reason, sizeof(self->reason), "node(s) already had a pod of this profile");
    } else {
        ks_error_set(err, "args.labelKey: must be a string, a pod label key such as \"app\"");
        goto fail;
    }
    return self;
fail:
    oppn_destroy(self);
    return NULL;
}

/* Does `other`, already on the node, belong to the same group as the pod being scheduled? */
static int same_group(const one_pod_per_node *self, const ks_pod *pod, ks_sym value,
                      const ks_pod *other)
{
    if (ks_pod_scheduler_name(other) != ks_pod_scheduler_name(pod))
        return 0;
    return self->label_key == KS_SYM_ABSENT || ks_pod_label(other, self->label_key) == value;
}

/* Filter workers, concurrently for different nodes: reads only the pod, the node and self. */
static ks_code oppn_filter(void *p, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                           ks_status *st)
{
    const one_pod_per_node *self = p;
    ks_sym value = KS_SYM_ABSENT;
    size_t n = ks_node_info_pod_count(ni);

    if (self->label_key != KS_SYM_ABSENT) {
        value = ks_pod_label(pod, self->label_key);
        if (value == KS_SYM_ABSENT)
            return KS_SUCCESS; /* not in any group: nothing to keep apart */
    }
    for (size_t i = 0; i < n; i++) {
        const ks_pod *other = ks_node_info_pod_at(ni, i);
        if (same_group(self, pod, value, other)) {
            if (ks_log_enabled(4))
                ks_log(4, "node %s: already runs %s/%s",
                       ks_sym_str(ks_node_name(ks_node_info_node(ni))),
                       ks_sym_str(ks_pod_namespace(other)), ks_sym_str(ks_pod_name(other)));
            ks_status_reason(st, self->reason);
            return KS_UNSCHEDULABLE;
        }
    }
    return KS_SUCCESS;
}

/* A rejected pod can fit after a node is added or a pod on a node goes away (or, with labelKey,
 * changes its label). */
static size_t oppn_events(void *p, ks_cluster_event *out, size_t cap)
{
    const one_pod_per_node *self = p;
    if (cap >= 2) {
        out[0].resource = KS_RES_NODE;
        out[0].actions = KS_ACT_ADD;
        out[1].resource = KS_RES_ASSIGNED_POD;
        out[1].actions =
            KS_ACT_DELETE | (self->label_key != KS_SYM_ABSENT ? KS_ACT_UPDATE_POD_LABEL : 0);
    }
    return 2;
}

/* The args this plugin reads (ABI 1.3): kubesched refuses any other key, with the file and the
 * field path, when it loads the configuration. Static storage. */
static const ks_arg_field oppn_arg_fields[] = {
    {.name = "labelKey", .type = KS_ARG_STRING},
};
static const ks_args_schema oppn_args_schema = KS_ARGS_SCHEMA("OnePodPerNodeArgs", oppn_arg_fields);

static const ks_plugin_desc one_pod_per_node_desc = {
    .size = sizeof(ks_plugin_desc),
    .name = PLUGIN_NAME,
    .create = oppn_create,
    .destroy = oppn_destroy,
    /* No PreFilter: each node's check needs only that node's pods. */
    .filter = oppn_filter,
    .events_to_register = oppn_events,
    .args_schema = &oppn_args_schema,
};

KS_DEFINE_MODULE(&one_pod_per_node_desc);
