/*
 * NodeMinResources: an out-of-tree Filter plugin, the smallest complete example of the kubesched
 * SDK. It keeps a profile's pods off nodes that are too small for them to belong on, whatever the
 * pods request: a node passes only when its allocatable CPU and memory reach the configured
 * minimums and, optionally, it carries a label.
 *
 *   pluginConfig:
 *   - name: NodeMinResources
 *     args:
 *       kubeschedPluginPath: min-resources/build/libnode_min_resources.so
 *       minCPU: "4"                 # quantity: "4", "1500m", 2
 *       minMemory: 16Gi             # quantity: "16Gi", "8G", "512Mi"
 *       requiredLabel: example.com/tier=large   # optional: "key" or "key=value"
 *
 * Rejections are UnschedulableAndUnresolvable (preemption cannot make a node bigger) and use one
 * constant reason string per check, built once in create(), so the scheduler's "0/N nodes are
 * available: ..." message and failure metrics aggregate them.
 *
 * Queueing hint (ABI 1.4, upstream QueueingHintFn): a pod this plugin rejected waits in the
 * scheduling queue until a Node event it registered may help. mr_events_with_hints registers Node
 * Add / UpdateNodeAllocatable / UpdateNodeLabel with mr_hint_after_node_change, which answers
 * KS_QUEUE only when the added or updated node now passes every check and did not before (an
 * unrelated label or a node still too small leaves the pod parked: KS_QUEUE_SKIP). The plain
 * events_to_register stays for hosts older than ABI 1.4, which do not read events_with_hints.
 *
 * Build it against the installed SDK only: see CMakeLists.txt next to this file and
 * examples/README.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <kubesched/plugin.h>

#define PLUGIN_NAME "NodeMinResources"

typedef struct min_resources {
    int64_t min_milli_cpu; /* 0: no CPU minimum */
    int64_t min_memory;    /* bytes; 0: no memory minimum */
    ks_sym label_key;      /* KS_SYM_ABSENT: no label required */
    ks_sym label_value;    /* KS_SYM_ABSENT: any value */
    char cpu_reason[96];
    char memory_reason[96];
    char label_reason[320];
} min_resources;

/* "2", "1500m" */
static void format_cpu(char *buf, size_t len, int64_t milli)
{
    if (milli % 1000 == 0)
        snprintf(buf, len, "%" PRId64, milli / 1000);
    else
        snprintf(buf, len, "%" PRId64 "m", milli);
}

/* "16Gi", "512Mi", "1000000" */
static void format_memory(char *buf, size_t len, int64_t bytes)
{
    static const char *const units[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int unit = -1;
    while (unit < 5 && bytes != 0 && bytes % 1024 == 0) {
        bytes /= 1024;
        unit++;
    }
    snprintf(buf, len, "%" PRId64 "%s", bytes, unit < 0 ? "" : units[unit]);
}

/* Reads an optional, non-negative quantity arg. 0 (and *out untouched) when absent. */
static int read_quantity(const ks_args *args, const char *arg, int milli, const char *examples,
                         int64_t *out, ks_error *err)
{
    int64_t v;
    int rc = ks_args_get_quantity(args, arg, milli, &v);
    if (rc == KS_ENOTFOUND)
        return 0;
    if (rc != 0) {
        ks_error_set(err, "args.%s: not a quantity (%s); use e.g. %s", arg, ks_strerror(rc),
                     examples);
        return rc;
    }
    if (v < 0) {
        ks_error_set(err, "args.%s: must not be negative; use e.g. %s", arg, examples);
        return KS_ERANGE;
    }
    *out = v;
    return 0;
}

/* requiredLabel: "key" or "key=value"; the key as upstream label keys: [prefix/]name. */
static int read_label(const ks_args *args, min_resources *self, ks_error *err)
{
    const char *spec, *eq;
    char key[254];
    size_t klen;
    int rc = ks_args_get_string(args, "requiredLabel", &spec);

    if (rc == KS_ENOTFOUND)
        return 0;
    if (rc != 0) {
        ks_error_set(err, "args.requiredLabel: must be a string, a node label key "
                          "(\"example.com/tier\") or key=value (\"example.com/tier=large\")");
        return rc;
    }
    eq = strchr(spec, '=');
    klen = eq ? (size_t)(eq - spec) : strlen(spec);
    if (klen == 0 || klen >= sizeof(key) || strpbrk(spec, " \t,") != NULL ||
        (eq && strchr(eq + 1, '=') != NULL)) {
        ks_error_set(err,
                     "args.requiredLabel: \"%s\" is not a node label key "
                     "(\"example.com/tier\") or key=value (\"example.com/tier=large\")",
                     spec);
        return KS_EINVAL;
    }
    memcpy(key, spec, klen);
    key[klen] = '\0';
    self->label_key = ks_intern(key);
    self->label_value = eq ? ks_intern(eq + 1) : KS_SYM_ABSENT;
    snprintf(self->label_reason, sizeof(self->label_reason), "node(s) did not have label %s", spec);
    return 0;
}

static void mr_destroy(void *p) { ks_free(p); }

/* Main thread, once per profile that enables the plugin. */
static void *mr_create(const ks_args *args, ks_error *err)
{
    min_resources *self = ks_alloc(sizeof(*self));
    char q[32];

    if (!self) {
        ks_error_set(err, "out of memory");
        return NULL;
    }
    memset(self, 0, sizeof(*self));
    self->label_key = KS_SYM_ABSENT;
    self->label_value = KS_SYM_ABSENT;
    if (read_quantity(args, "minCPU", 1, "\"2\" or \"1500m\"", &self->min_milli_cpu, err) != 0 ||
        read_quantity(args, "minMemory", 0, "\"8Gi\" or \"512Mi\"", &self->min_memory, err) != 0 ||
        read_label(args, self, err) != 0)
        goto fail;
    if (self->min_milli_cpu == 0 && self->min_memory == 0 && self->label_key == KS_SYM_ABSENT) {
        ks_error_set(err, "args: set at least one of minCPU (e.g. \"2\"), minMemory "
                          "(e.g. \"8Gi\") or requiredLabel (e.g. \"example.com/tier=large\")");
        goto fail;
    }
    format_cpu(q, sizeof(q), self->min_milli_cpu);
    snprintf(self->cpu_reason, sizeof(self->cpu_reason), "node(s) had less than %s CPU allocatable",
             q);
    format_memory(q, sizeof(q), self->min_memory);
    snprintf(self->memory_reason, sizeof(self->memory_reason),
             "node(s) had less than %s memory allocatable", q);
    return self;
fail:
    mr_destroy(self);
    return NULL;
}

/* Whether node passes every check (the Filter's verdict, without the reasons). Pure. */
static int node_qualifies(const min_resources *self, const ks_node *node)
{
    const ks_resources *alloc = ks_node_allocatable(node);
    if (alloc->milli_cpu < self->min_milli_cpu || alloc->memory < self->min_memory)
        return 0;
    if (self->label_key != KS_SYM_ABSENT) {
        ks_sym v = ks_node_label(node, self->label_key);
        if (v == KS_SYM_ABSENT || (self->label_value != KS_SYM_ABSENT && v != self->label_value))
            return 0;
    }
    return 1;
}

/* Filter workers, concurrently for different nodes: reads only the node and self (immutable). */
static ks_code mr_filter(void *p, ks_cycle *cycle, const ks_pod *pod, const ks_node_info *ni,
                         ks_status *st)
{
    const min_resources *self = p;
    const ks_node *node = ks_node_info_node(ni);
    const ks_resources *alloc = ks_node_allocatable(node);
    ks_code code = KS_SUCCESS;

    /* ks_log tests the level too; testing first also skips the ks_sym_str call. */
    if (ks_log_enabled(4))
        ks_log(4, "node %s: allocatable cpu %" PRId64 "m, memory %" PRId64 " bytes",
               ks_sym_str(ks_node_name(node)), alloc->milli_cpu, alloc->memory);

    if (alloc->milli_cpu < self->min_milli_cpu) {
        ks_status_reason(st, self->cpu_reason);
        code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    if (alloc->memory < self->min_memory) {
        ks_status_reason(st, self->memory_reason);
        code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    if (self->label_key != KS_SYM_ABSENT) {
        ks_sym v = ks_node_label(node, self->label_key);
        if (v == KS_SYM_ABSENT || (self->label_value != KS_SYM_ABSENT && v != self->label_value)) {
            ks_status_reason(st, self->label_reason);
            code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
    }
    return code;
}

/* ABI <= 1.3 hosts: a rejected pod can only fit after a node is added or its allocatable or
 * labels change; every such event moves it. Main thread. */
static size_t mr_events(void *self, ks_cluster_event *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event ev[] = {
        {KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_ALLOCATABLE | KS_ACT_UPDATE_NODE_LABEL},
    };
    return ks_events_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* The queueing hint: may this Node event make `pod` (rejected by this plugin) schedulable? It
 * runs on the host's event thread, under no lock of ours, with every object borrowed for the
 * call: it reads ev and self (immutable after create) only and does not block. ev->old_node is
 * NULL for an added node. KS_QUEUE: retry the pod; KS_QUEUE_SKIP: leave it parked. */
static ks_queueing_hint mr_hint_after_node_change(void *p, const ks_pod *pod,
                                                  const ks_event_info *ev)
{
    const min_resources *self = p;
    (void)pod; /* the checks do not depend on the pod */
    if (!ev->new_node)
        return KS_QUEUE; /* not what we registered: when unsure, queue */
    if (!node_qualifies(self, ev->new_node))
        return KS_QUEUE_SKIP; /* still too small / unlabelled: cannot help */
    if (ev->old_node && node_qualifies(self, ev->old_node))
        return KS_QUEUE_SKIP; /* passed before already: the rejection was elsewhere */
    return KS_QUEUE;
}

/* ABI 1.4 hosts use this instead of mr_events. Main thread. */
static size_t mr_events_with_hints(void *self, ks_cluster_event_hint *out, size_t cap)
{
    (void)self;
    static const ks_cluster_event_hint ev[] = {
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_ALLOCATABLE | KS_ACT_UPDATE_NODE_LABEL},
         mr_hint_after_node_change},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* The args this plugin reads (ABI 1.3): kubesched refuses an unknown key such as "minCPUU" or a
 * value of the wrong type when it loads the configuration, with the file and the field path,
 * before create() runs. No defaults: an unset minimum is no minimum. Static storage. */
static const ks_arg_field mr_arg_fields[] = {
    {.name = "minCPU", .type = KS_ARG_QUANTITY},
    {.name = "minMemory", .type = KS_ARG_QUANTITY},
    {.name = "requiredLabel", .type = KS_ARG_STRING},
};
static const ks_args_schema mr_args_schema = KS_ARGS_SCHEMA("NodeMinResourcesArgs", mr_arg_fields);

static const ks_plugin_desc node_min_resources = {
    .size = sizeof(ks_plugin_desc),
    .name = PLUGIN_NAME,
    .create = mr_create,
    .destroy = mr_destroy,
    /* No PreFilter: the check needs nothing from the pod, so there is nothing to precompute. */
    .filter = mr_filter,
    .events_to_register = mr_events,
    .args_schema = &mr_args_schema,
    .events_with_hints = mr_events_with_hints,
};

KS_DEFINE_MODULE(&node_min_resources);
