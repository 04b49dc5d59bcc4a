/*
 * Coscheduling: gang scheduling compatible with kubernetes-sigs/scheduler-plugins' PodGroup CRD
 * (scheduling.x-k8s.io/v1alpha1), the gang scheduler of Kubeflow's training and MPI operators,
 * written as an out-of-tree kubesched plugin against the installed SDK alone (plugin ABI 1.8).
 *
 * A pod joins a group with the label scheduling.x-k8s.io/pod-group=<PodGroup name in its
 * namespace>. The PodGroup's spec.minMember pods are placed all together or not at all:
 *   - QueueSort: priority, then the PodGroup's creationTimestamp (a pod without a group: its
 *     first attempt), then namespace/name, so a group's pods come out of the queue together;
 *   - PreFilter: refuses a pod whose group failed recently (podGroupBackoffSeconds), has fewer
 *     than minMember pods, or whose minResources the cluster cannot hold (upstream's
 *     CheckClusterResource, over the free resources of every node);
 *   - PostFilter: when a member cannot be placed, rejects the members waiting at Permit
 *     ("optimistic rejection in PostFilter") unless the group is already (nearly) complete;
 *   - Permit: a member waits (spec.scheduleTimeoutSeconds, else permitWaitingTimeSeconds) until
 *     minMember members are assigned, then the last one allows them all; the group's first
 *     member to wait activates its siblings, so they are tried now rather than after their
 *     backoff (unless the group is held after a rejection: kubesched's, see "the hold");
 *   - Unreserve: a member that fails (a Permit timeout, a failed binding) rejects the others.
 * Decisions and messages are those of scheduler-plugins' latest release (pkg/coscheduling),
 * compared with its v0.30.6 build in tests/e2e/test-coscheduling-upstream.sh. As there, the
 * PodGroup's status is the business of scheduler-plugins' controller, not of the scheduler.
 * kubesched's own, for scheduler-plugins' known pains: more events (cs_events) and the hold.
 *
 *   profiles:
 *   - schedulerName: gang-scheduler
 *     plugins:
 *       queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: "*"}]}
 *       preFilter: {enabled: [{name: Coscheduling}]}
 *       postFilter: {enabled: [{name: Coscheduling}]}
 *       permit: {enabled: [{name: Coscheduling}]}
 *       reserve: {enabled: [{name: Coscheduling}]}
 *     pluginConfig:
 *     - name: Coscheduling
 *       args:
 *         kubeschedPluginPath: coscheduling/build/libcoscheduling.so
 *         permitWaitingTimeSeconds: 60   # default
 *         podGroupBackoffSeconds: 0      # default: no backoff
 *
 * kubesched lists and watches podgroups.scheduling.x-k8s.io for the plugin (ks_resource_watch):
 * grant list and watch on them (the chart's `coscheduling` values do), and in `simulate` put the
 * PodGroups in the cluster file.
 *
 * Threads: create/destroy on the main thread; QueueSort under the queue lock (it reads the
 * PodGroup through the host, which is thread-safe); PreFilter, PostFilter, Permit and Reserve on
 * the scheduling thread; Unreserve on the scheduling or a binding thread; the pod-delete hint
 * on any thread, pure. The three expiring sets (groups that passed the resource check, groups
 * backing off, groups held) are guarded by self->mu.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kubesched/plugin.h>

#define PLUGIN_NAME "Coscheduling"
#define POD_GROUP_LABEL "scheduling.x-k8s.io/pod-group"
/* upstream util.DefaultWaitTime: a group without scheduleTimeoutSeconds and a zero
 * permitWaitingTimeSeconds */
#define DEFAULT_WAIT_NS (60LL * 1000000000LL)
#define NS_PER_S 1000000000LL

/* A group name with its expiry (the scheduler's clock), for the expiring sets. */
typedef struct expiring {
    char name[320]; /* "<namespace>/<name>" */
    int64_t until_ns;
    int rejections; /* the held set only: PostFilter rejections in a row */
} expiring;

typedef struct expiring_set {
    expiring *items;
    size_t n, cap;
} expiring_set;

typedef struct cosched {
    int64_t schedule_timeout_ns; /* permitWaitingTimeSeconds */
    int64_t backoff_ns;          /* podGroupBackoffSeconds; 0: none */
    ks_resource *pod_groups;
    ks_sym label;
    pthread_mutex_t mu;
    expiring_set permitted;  /* upstream permittedPG: passed the resource check */
    expiring_set backed_off; /* upstream backedOffPG: failed recently */
    expiring_set held;       /* kubesched's: rejected in PostFilter, no sibling activation */
} cosched;

/* ---- expiring sets (upstream's go-cache with a TTL per entry) ------------------------------ */

static int set_has(cosched *self, expiring_set *s, const char *name)
{
    int64_t now = ks_clock_now_ns();
    int found = 0;
    pthread_mutex_lock(&self->mu);
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->items[i].name, name) && s->items[i].until_ns > now)
            found = 1;
    pthread_mutex_unlock(&self->mu);
    return found;
}

static void set_del_locked(expiring_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->items[i].name, name))
            s->items[i--] = s->items[--s->n];
}

static void set_del(cosched *self, expiring_set *s, const char *name)
{
    pthread_mutex_lock(&self->mu);
    set_del_locked(s, name);
    pthread_mutex_unlock(&self->mu);
}

/* A new entry named name at the end of s (its other fields zero), NULL when out of memory. */
static expiring *set_append_locked(expiring_set *s, const char *name)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        expiring *items = realloc(s->items, cap * sizeof(*items));
        if (!items)
            return NULL;
        s->items = items;
        s->cap = cap;
    }
    expiring *e = &s->items[s->n++];
    memset(e, 0, sizeof(*e));
    snprintf(e->name, sizeof(e->name), "%s", name);
    return e;
}

/* Adds name for ttl from now, replacing an entry of the same name; expired entries go. */
static void set_add(cosched *self, expiring_set *s, const char *name, int64_t ttl_ns)
{
    int64_t now = ks_clock_now_ns();
    pthread_mutex_lock(&self->mu);
    set_del_locked(s, name);
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].until_ns <= now)
            s->items[i--] = s->items[--s->n];
    expiring *e = set_append_locked(s, name);
    if (e)
        e->until_ns = now + ttl_ns;
    pthread_mutex_unlock(&self->mu);
}

/* ---- the hold after a rejection (kubesched's) ------------------------------------------------
 *
 * Since v1.33 (SchedulerPopFromBackoffQ) an idle scheduler takes pods from backoffQ before their
 * backoff is over. For a group that cannot fit, upstream's Coscheduling then spins: PostFilter
 * rejects the waiting members; forgetting them is an AssignedPodDelete that sends the member
 * that failed Filter straight back; it now fits, waits at Permit as the group's first, and
 * activates its siblings (in flight, they come back through backoffQ and are popped at once);
 * one of them fails Filter, and so on, thousands of attempts a second on a quiet cluster. So a
 * group rejected in PostFilter is held: for 1 s after its first rejection in a row, doubling up
 * to 10 s (kube-scheduler's own pod backoff, which PopFromBackoffQ skips), its first member at
 * Permit does not activate the siblings. They wait for an event instead (a node added or
 * grown, a pod of another group deleted: cs_events), which is what can make room. Allowing the
 * group at Permit ends the hold and the count. */

#define HOLD_INITIAL_NS (1LL * NS_PER_S)
#define HOLD_MAX_NS (10LL * NS_PER_S)

static int64_t hold_ns(int rejections)
{
    int64_t d = HOLD_INITIAL_NS;
    for (int i = 1; i < rejections && d < HOLD_MAX_NS; i++)
        d *= 2;
    return d < HOLD_MAX_NS ? d : HOLD_MAX_NS;
}

/* An entry this long past its hold is forgotten: the group starts again at 1 s. */
#define HOLD_FORGET_NS (60LL * NS_PER_S)

/* Counts one more rejection of the group in a row and holds it for its backoff from now. */
static void hold_group(cosched *self, const char *full)
{
    int64_t now = ks_clock_now_ns();
    expiring_set *s = &self->held;
    int rejections = 1;
    pthread_mutex_lock(&self->mu);
    for (size_t i = 0; i < s->n; i++) {
        if (!strcmp(s->items[i].name, full))
            rejections = s->items[i].rejections + 1;
        if (!strcmp(s->items[i].name, full) || s->items[i].until_ns + HOLD_FORGET_NS <= now)
            s->items[i--] = s->items[--s->n];
    }
    expiring *e = set_append_locked(s, full);
    if (e) {
        e->until_ns = now + hold_ns(rejections);
        e->rejections = rejections;
    }
    pthread_mutex_unlock(&self->mu);
}

/* ---- the pod group ------------------------------------------------------------------------- */

/* The pod's group name (its label), KS_SYM_ABSENT when it has none (util.GetPodGroupLabel). */
static ks_sym group_label(const cosched *self, const ks_pod *pod)
{
    ks_sym v = ks_pod_label(pod, self->label);
    return v == KS_SYM_EMPTY ? KS_SYM_ABSENT : v;
}

/* upstream GetPodGroup: "<namespace>/<group>" in full (empty when the pod names none) and the
 * PodGroup (a reference, NULL when it does not exist). */
static const ks_object *get_pod_group(const cosched *self, const ks_pod *pod, char *full,
                                      size_t len)
{
    ks_sym g = group_label(self, pod);
    full[0] = '\0';
    if (g == KS_SYM_ABSENT)
        return NULL;
    snprintf(full, len, "%s/%s", ks_sym_str(ks_pod_namespace(pod)), ks_sym_str(g));
    return ks_resource_get(self->pod_groups, ks_pod_namespace(pod), g);
}

static int64_t min_member(const ks_object *pg)
{
    int64_t v = 0;
    return ks_object_get_int(pg, "spec.minMember", &v) == 0 ? v : 0;
}

typedef struct counter {
    size_t n;
    const char *skip_uid;
} counter;

static void count_pod(void *ctx, const ks_pod *pod)
{
    counter *c = ctx;
    if (!c->skip_uid || strcmp(ks_pod_uid(pod), c->skip_uid) != 0)
        c->n++;
}

/* The pods of the group that exist (pending or assigned): upstream's pod lister with the label. */
static size_t group_pods(const cosched *self, ks_cycle *cycle, ks_sym ns, ks_sym group)
{
    counter c = {0, NULL};
    ks_pods_each(cycle, ns, self->label, group, count_pod, &c);
    return c.n;
}

/* upstream CalculateAssignedPods: pods of the group on a node of this cycle's snapshot (bound,
 * or assumed: waiting at Permit or being bound). The group's pods come from the pod lister (the
 * host indexes it by label); each counts when the snapshot has it on its node, which is what
 * upstream's walk over every NodeInfo finds, without that walk (O(the group), not O(pods)). */
typedef struct assigned_walk {
    const ks_snapshot *snap;
    size_t n;
} assigned_walk;

static void count_assigned(void *ctx, const ks_pod *pod)
{
    assigned_walk *a = ctx;
    ks_sym node = ks_pod_node_name(pod);
    const ks_node_info *ni = node == KS_SYM_EMPTY ? NULL : ks_snapshot_node(a->snap, node);
    if (!ni)
        return;
    const ks_pod *const *pods;
    size_t np = ks_node_info_pods_in_namespace(ni, ks_pod_namespace(pod), &pods);
    for (size_t k = 0; k < np; k++)
        if (!strcmp(ks_pod_uid(pods[k]), ks_pod_uid(pod))) {
            a->n++;
            return;
        }
}

static size_t assigned_pods(const cosched *self, ks_cycle *cycle, ks_sym ns, ks_sym group)
{
    assigned_walk a = {ks_cycle_snapshot(cycle), 0};
    ks_pods_each(cycle, ns, self->label, group, count_assigned, &a);
    return a.n;
}

/* ---- minResources: upstream CheckClusterResource, with Go's resource.Quantity arithmetic ---- */

/* A resource.Quantity as its int64Amount (value x 10^scale), its cached string (reset by any
 * arithmetic) and its format: what Go's %v prints of a Quantity held by value,
 * "{{value scale} {<nil>} s Format}". */
typedef struct goquantity {
    char name[256];
    int64_t value;
    int32_t scale;
    char s[64];
    const char *format;
} goquantity;

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* value * 10^exp, 0 on overflow (then the plugin keeps the unscaled comparison). */
static int scale_up(int64_t v, int32_t exp, int64_t *out)
{
    for (int32_t i = 0; i < exp; i++) {
        if (v > INT64_MAX / 10 || v < INT64_MIN / 10)
            return 0;
        v *= 10;
    }
    *out = v;
    return 1;
}

/* resource.ParseQuantity's int64 fast path for the forms a PodGroup uses ("4", "1.5", "500m",
 * "16Gi", "2G", "1e3"); 0 when the text is not one of them. */
static int parse_goquantity(const char *str, goquantity *q)
{
    static const struct {
        const char *suffix;
        int base2, exp;
    } suffixes[] = {{"Ki", 1, 10}, {"Mi", 1, 20}, {"Gi", 1, 30}, {"Ti", 1, 40},
                    {"Pi", 1, 50}, {"Ei", 1, 60}, {"n", 0, -9},  {"u", 0, -6},
                    {"m", 0, -3},  {"", 0, 0},    {"k", 0, 3},   {"M", 0, 6},
                    {"G", 0, 9},   {"T", 0, 12},  {"P", 0, 15},  {"E", 0, 18}};
    const char *p = str;
    int positive = 1;
    if (*p == '+' || *p == '-')
        positive = *p++ == '+';
    while (*p == '0' && is_digit(p[1]))
        p++; /* upstream strips the leading zeros of the integer part */
    char digits[40];
    size_t nd = 0, ndenom = 0;
    for (; is_digit(*p) && nd < sizeof(digits) - 1; p++)
        digits[nd++] = *p;
    if (*p == '.')
        for (p++; is_digit(*p) && nd < sizeof(digits) - 1; p++, ndenom++)
            digits[nd++] = *p;
    digits[nd] = '\0';
    if (nd == 0)
        return 0;
    int base2 = 0;
    int32_t exp = 0;
    if (*p == 'e' || *p == 'E') {
        char *end;
        long e = strtol(p + 1, &end, 10);
        if (end == p + 1 || *end || e < -100 || e > 100)
            return 0;
        exp = (int32_t)e;
        q->format = "DecimalExponent";
    } else {
        size_t i = 0;
        while (i < sizeof(suffixes) / sizeof(suffixes[0]) && strcmp(p, suffixes[i].suffix) != 0)
            i++;
        if (i == sizeof(suffixes) / sizeof(suffixes[0]))
            return 0;
        base2 = suffixes[i].base2;
        exp = suffixes[i].exp;
        q->format = base2 ? "BinarySI" : "DecimalSI";
    }
    int64_t v = strtoll(digits, NULL, 10);
    if (base2) {
        if (ndenom || exp >= 63 || v > (INT64_MAX >> exp))
            return 0; /* upstream takes its inf.Dec path here */
        q->value = (positive ? v : -v) << exp;
        q->scale = 0;
    } else {
        q->value = positive ? v : -v;
        q->scale = exp - (int32_t)ndenom;
    }
    /* the canonical-form check of ParseQuantity decides whether the text is kept */
    int keep = base2 ? (exp % 10 == 0 && (v & 0x07) != 0)
                     : (q->scale % 3 == 0 && !(nd >= 3 && !strcmp(digits + nd - 3, "000")) &&
                        digits[0] != '0');
    snprintf(q->s, sizeof(q->s), "%s", keep ? str : "");
    return 1;
}

/* Quantity.Sub(y) on the int64 path (int64Amount.Add of -y). */
static void goquantity_sub(goquantity *q, int64_t yv, int32_t ys, const char *yformat)
{
    q->s[0] = '\0';
    if (q->value == 0)
        q->format = yformat;
    yv = -yv;
    if (yv == 0)
        return;
    if (q->value == 0) {
        q->value = yv;
        q->scale = ys;
    } else if (q->scale == ys) {
        q->value += yv;
    } else if (q->scale > ys) {
        int64_t c;
        if (scale_up(q->value, q->scale - ys, &c)) {
            q->value = c + yv;
            q->scale = ys;
        }
    } else {
        int64_t c;
        if (scale_up(yv, ys - q->scale, &c))
            q->value += c;
    }
}

/* What upstream's getNodeResource leaves on a node for the group: allocatable minus the requests
 * of the pods that are not the group's, as a ResourceList (util.ResourceList). */
typedef struct node_left {
    int64_t milli_cpu, memory, ephemeral, pods;
    const ks_resources *alloc;
    int64_t *scalar_left; /* per allocatable scalar */
} node_left;

static void node_resource_left(const cosched *self, const ks_node_info *ni, const char *full,
                               node_left *out)
{
    const ks_resources *alloc = ks_node_allocatable(ks_node_info_node(ni));
    const ks_resources *req = ks_node_info_requested(ni);
    size_t npods = ks_node_info_pod_count(ni);
    out->alloc = alloc;
    out->milli_cpu = alloc->milli_cpu - req->milli_cpu;
    out->memory = alloc->memory - req->memory;
    out->ephemeral = alloc->ephemeral_storage - req->ephemeral_storage;
    for (uint32_t k = 0; k < alloc->nscalar; k++) {
        int64_t used = 0;
        for (uint32_t r = 0; r < req->nscalar; r++)
            if (req->scalar[r].name == alloc->scalar[k].name)
                used = req->scalar[r].value;
        out->scalar_left[k] = alloc->scalar[k].value - used;
    }
    /* the group's own pods give their room back (nodeClone.RemovePod) */
    for (size_t i = 0; i < ks_node_info_pod_count(ni); i++) {
        const ks_pod *p = ks_node_info_pod_at(ni, i);
        ks_sym g = group_label(self, p);
        char name[320];
        if (g == KS_SYM_ABSENT)
            continue;
        snprintf(name, sizeof(name), "%s/%s", ks_sym_str(ks_pod_namespace(p)), ks_sym_str(g));
        if (strcmp(name, full) != 0)
            continue;
        const ks_resources *pr = ks_pod_requests(p);
        out->milli_cpu += pr->milli_cpu;
        out->memory += pr->memory;
        out->ephemeral += pr->ephemeral_storage;
        for (uint32_t k = 0; k < alloc->nscalar; k++)
            for (uint32_t r = 0; r < pr->nscalar; r++)
                if (pr->scalar[r].name == alloc->scalar[k].name)
                    out->scalar_left[k] += pr->scalar[r].value;
        npods--;
    }
    out->pods = alloc->allowed_pods - (int64_t)npods;
}

/* The node's free amount of resource `name` as util.ResourceList gives it: value, scale, format
 * (a resource the node does not list is the zero Quantity). */
static void node_amount(const node_left *nl, const char *name, int64_t *v, int32_t *scale,
                        const char **format)
{
    *v = 0;
    *scale = 0;
    *format = "";
    if (!strcmp(name, "cpu")) {
        *v = nl->milli_cpu, *scale = -3, *format = "DecimalSI";
    } else if (!strcmp(name, "memory")) {
        *v = nl->memory, *format = "BinarySI";
    } else if (!strcmp(name, "pods")) {
        *v = nl->pods, *format = "BinarySI";
    } else if (!strcmp(name, "ephemeral-storage")) {
        *v = nl->ephemeral, *format = "BinarySI";
    } else {
        ks_sym sym = ks_sym_lookup(name);
        for (uint32_t k = 0; k < nl->alloc->nscalar; k++)
            if (nl->alloc->scalar[k].name == sym) {
                *v = nl->scalar_left[k];
                *format = strncmp(name, "hugepages-", 10) == 0 ? "BinarySI" : "DecimalSI";
            }
    }
}

static int cmp_quantity_name(const void *a, const void *b)
{
    return strcmp(((const goquantity *)a)->name, ((const goquantity *)b)->name);
}

/* The request upstream checks: spec.minResources with pods = minMember. 0 and *n = count, or
 * KS_EPARSE for a quantity the plugin cannot read. */
static int requested_resources(const ks_object *pg, int64_t min_member, goquantity *q, size_t cap,
                               size_t *n)
{
    size_t count = 0;
    *n = 0;
    if (ks_object_count(pg, "spec.minResources", &count) != 0)
        return 0;
    for (size_t i = 0; i < count && *n < cap - 1; i++) {
        const char *name, *text;
        char path[320], num[64];
        if (ks_object_key_at(pg, "spec.minResources", i, &name) != 0 || !strcmp(name, "pods"))
            continue;
        snprintf(path, sizeof(path), "spec.minResources[\"%s\"]", name);
        int64_t milli;
        if (ks_object_get_string(pg, path, &text) != 0) {
            if (ks_object_get_quantity(pg, path, 1, &milli) != 0)
                return KS_EPARSE;
            snprintf(num, sizeof(num), "%" PRId64 "m", milli); /* a bare number in a file */
            text = num;
        }
        goquantity *g = &q[(*n)++];
        snprintf(g->name, sizeof(g->name), "%s", name);
        if (!parse_goquantity(text, g))
            return KS_EPARSE;
    }
    goquantity *pods = &q[(*n)++];
    snprintf(pods->name, sizeof(pods->name), "pods");
    pods->value = min_member; /* resource.NewQuantity(minMember, DecimalSI) */
    pods->scale = 0;
    pods->s[0] = '\0';
    pods->format = "DecimalSI";
    qsort(q, *n, sizeof(*q), cmp_quantity_name);
    return 0;
}

/* upstream CheckClusterResource: subtract each node's free resources from the request until
 * nothing is left (0), else the gap as Go prints the remaining map ("resource gap: map[...]"). */
static int check_cluster_resource(const cosched *self, ks_cycle *cycle, const char *full,
                                  goquantity *q, size_t n, char *msg, size_t len)
{
    const ks_snapshot *snap = ks_cycle_snapshot(cycle);
    int64_t scalar_left[64];
    int gone[64] = {0};
    size_t left = n;
    for (size_t i = 0, nn = ks_snapshot_node_count(snap); i < nn && left; i++) {
        const ks_node_info *ni = ks_snapshot_node_at(snap, i);
        if (!ks_node_info_node(ni))
            continue;
        node_left nl = {.scalar_left = scalar_left};
        if (ks_node_allocatable(ks_node_info_node(ni))->nscalar > 64)
            continue;
        node_resource_left(self, ni, full, &nl);
        for (size_t k = 0; k < n; k++) {
            if (gone[k])
                continue;
            int64_t v;
            int32_t sc;
            const char *fmt;
            node_amount(&nl, q[k].name, &v, &sc, &fmt);
            goquantity_sub(&q[k], v, sc, fmt);
            if (q[k].value <= 0) {
                gone[k] = 1;
                left--;
            }
        }
    }
    if (!left)
        return 0;
    size_t off = (size_t)snprintf(msg, len, "resource gap: map[");
    int first = 1;
    for (size_t k = 0; k < n && off < len; k++) {
        if (gone[k])
            continue;
        off += (size_t)snprintf(msg + off, len - off, "%s%s:{{%" PRId64 " %d} {<nil>} %s %s}",
                                first ? "" : " ", q[k].name, q[k].value, (int)q[k].scale, q[k].s,
                                q[k].format);
        first = 0;
    }
    if (off < len)
        snprintf(msg + off, len - off, "]");
    return KS_UNSCHEDULABLE;
}

/* ---- extension points ---------------------------------------------------------------------- */

/* QueueSort (upstream Less): priority, then the group's creation (or the pod's first attempt),
 * then namespace/name. Under the queue lock: reads the pods and PodGroups only. */
static int64_t creation_ns(const cosched *self, const ks_queued_pod *qp)
{
    const ks_pod *pod = ks_queued_pod_pod(qp);
    int64_t ts = ks_queued_pod_initial_attempt_unix_ns(qp);
    ks_sym g = group_label(self, pod);
    if (g == KS_SYM_ABSENT)
        return ts;
    const ks_object *pg = ks_resource_get(self->pod_groups, ks_pod_namespace(pod), g);
    int64_t created;
    if (pg && ks_object_get_time(pg, "metadata.creationTimestamp", &created) == 0)
        ts = created;
    ks_object_release(pg);
    return ts;
}

static int cs_less(void *p, const ks_queued_pod *a, const ks_queued_pod *b)
{
    const cosched *self = p;
    const ks_pod *pa = ks_queued_pod_pod(a), *pb = ks_queued_pod_pod(b);
    int32_t prio_a = ks_pod_priority(pa), prio_b = ks_pod_priority(pb);
    if (prio_a != prio_b)
        return prio_a > prio_b;
    int64_t ta = creation_ns(self, a), tb = creation_ns(self, b);
    if (ta != tb)
        return ta < tb;
    int c = strcmp(ks_sym_str(ks_pod_namespace(pa)), ks_sym_str(ks_pod_namespace(pb)));
    if (c == 0)
        c = strcmp(ks_sym_str(ks_pod_name(pa)), ks_sym_str(ks_pod_name(pb)));
    return c < 0;
}

/* PreFilter (upstream PodGroupManager.PreFilter): an error is UnschedulableAndUnresolvable, so
 * that no preemption is attempted. */
static ks_code cs_pre_filter(void *p, ks_cycle *cycle, const ks_pod *pod, ks_prefilter_result *res,
                             ks_status *st)
{
    cosched *self = p;
    char full[320];
    const ks_object *pg = get_pod_group(self, pod, full, sizeof(full));
    if (!pg)
        return KS_SUCCESS;
    ks_code code = KS_SUCCESS;
    int64_t mm = min_member(pg);
    if (set_has(self, &self->backed_off, full)) {
        ks_status_reasonf(st, "podGroup %s failed recently", full);
        code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        goto out;
    }
    size_t npods = group_pods(self, cycle, ks_pod_namespace(pod), group_label(self, pod));
    if ((int64_t)npods < mm) {
        ks_status_reasonf(st,
                          "pre-filter pod %s cannot find enough sibling pods, current pods "
                          "number: %zu, minMember of group: %" PRId64,
                          ks_sym_str(ks_pod_name(pod)), npods, mm);
        code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        goto out;
    }
    size_t nres = 0;
    if (ks_object_count(pg, "spec.minResources", &nres) != 0 ||
        set_has(self, &self->permitted, full))
        goto out;
    goquantity q[65];
    char msg[1024];
    if (requested_resources(pg, mm, q, 65, &nres) != 0) {
        ks_status_reasonf(st, "podGroup %s: spec.minResources: a quantity the plugin cannot read",
                          full);
        code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        goto out;
    }
    if (check_cluster_resource(self, cycle, full, q, nres, msg, sizeof(msg)) != 0) {
        ks_status_reason(st, msg);
        code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        goto out;
    }
    set_add(self, &self->permitted, full, self->schedule_timeout_ns);
out:
    (void)res;
    ks_object_release(pg);
    if (code != KS_SUCCESS && ks_log_enabled(4))
        ks_log(4, "PreFilter failed for pod %s/%s", ks_sym_str(ks_pod_namespace(pod)),
               ks_sym_str(ks_pod_name(pod)));
    return code;
}

/* What the waiting-pod walks need: the group and what to do with its waiting members. */
typedef struct group_walk {
    ks_sym label, ns, group;
    int allow;
    const char *message;
} group_walk;

static void walk_waiting(void *ctx, const ks_waiting_pod_info *wp)
{
    group_walk *w = ctx;
    if (ks_pod_namespace(wp->pod) != w->ns || ks_pod_label(wp->pod, w->label) != w->group)
        return;
    if (w->allow)
        ks_permit_allow(ks_pod_uid(wp->pod), PLUGIN_NAME);
    else
        ks_permit_reject(ks_pod_uid(wp->pod), PLUGIN_NAME, w->message);
}

/* PostFilter (upstream): a member that fits nowhere makes the waiting members give up their
 * places, unless enough of the group is already placed (or only a tenth is missing). */
static ks_code cs_post_filter(void *p, ks_cycle *cycle, const ks_pod *pod,
                              const ks_filter_outcome *o, ks_post_filter_result *res, ks_status *st)
{
    cosched *self = p;
    char full[320];
    (void)o;
    (void)res;
    const ks_object *pg = get_pod_group(self, pod, full, sizeof(full));
    if (!pg) {
        ks_status_reason(st, "can not find pod group");
        return KS_UNSCHEDULABLE;
    }
    ks_sym ns = ks_pod_namespace(pod), group = group_label(self, pod);
    int64_t mm = min_member(pg);
    ks_object_release(pg);
    size_t assigned = assigned_pods(self, cycle, ns, group);
    if ((int64_t)assigned >= mm)
        return KS_UNSCHEDULABLE;
    /* float32 as upstream computes it */
    float not_assigned = (float)(mm - (int64_t)assigned) / (float)mm;
    if (not_assigned <= 0.1f)
        return KS_UNSCHEDULABLE;
    group_walk w = {self->label, ns, group, 0, "optimistic rejection in PostFilter"};
    ks_waiting_pods_each(cycle, walk_waiting, &w);
    hold_group(self, full);
    if (self->backoff_ns > 0 && (int64_t)group_pods(self, cycle, ns, group) >= mm)
        set_add(self, &self->backed_off, full, self->backoff_ns);
    set_del(self, &self->permitted, full);
    ks_status_reasonf(st,
                      "PodGroup %s gets rejected due to Pod %s is unschedulable even after "
                      "PostFilter",
                      full, ks_sym_str(ks_pod_name(pod)));
    return KS_UNSCHEDULABLE;
}

/* upstream ActivateSiblings: the group's other pods go to the active queue at the end of this
 * cycle. */
typedef struct activate_walk {
    ks_cycle *cycle;
    const char *uid;
} activate_walk;

static void activate_sibling(void *ctx, const ks_pod *pod)
{
    activate_walk *a = ctx;
    if (strcmp(ks_pod_uid(pod), a->uid) != 0)
        ks_activate_pod(a->cycle, pod);
}

/* upstream util.GetWaitTimeDuration */
static int64_t wait_time_ns(const cosched *self, const ks_object *pg)
{
    int64_t secs;
    if (pg && ks_object_get_int(pg, "spec.scheduleTimeoutSeconds", &secs) == 0)
        return secs * NS_PER_S;
    if (self->schedule_timeout_ns != 0)
        return self->schedule_timeout_ns;
    return DEFAULT_WAIT_NS;
}

static ks_code cs_permit(void *p, ks_cycle *cycle, const ks_pod *pod, ks_sym node,
                         int64_t *timeout_ms, ks_status *st)
{
    cosched *self = p;
    char full[320];
    (void)node;
    const ks_object *pg = get_pod_group(self, pod, full, sizeof(full));
    if (!full[0])
        return KS_SUCCESS; /* PodGroupNotSpecified */
    if (!pg) {
        ks_status_reason(st, "PodGroup not found");
        return KS_UNSCHEDULABLE;
    }
    ks_sym ns = ks_pod_namespace(pod), group = group_label(self, pod);
    int64_t mm = min_member(pg);
    size_t assigned = assigned_pods(self, cycle, ns, group);
    /* the pod itself is not in this cycle's snapshot yet */
    if ((int64_t)assigned + 1 >= mm) {
        ks_object_release(pg);
        group_walk w = {self->label, ns, group, 1, NULL};
        ks_waiting_pods_each(cycle, walk_waiting, &w);
        set_del(self, &self->held, full);
        return KS_SUCCESS;
    }
    int64_t wait = self->schedule_timeout_ns, w2 = wait_time_ns(self, pg);
    if (w2 != 0)
        wait = w2;
    ks_object_release(pg);
    *timeout_ms = wait / 1000000;
    if (ks_log_enabled(2))
        ks_log(2, "Pod is waiting to be scheduled to node pod=%s/%s nodeName=%s", ks_sym_str(ns),
               ks_sym_str(ks_pod_name(pod)), ks_sym_str(node));
    /* upstream activates the siblings only from the group's first member at Permit (assigned
     * 0: PermitState.Activate), so that they are tried now rather than after their backoff;
     * kubesched's hold (above) skips that right after a rejection. */
    if (assigned == 0 && !set_has(self, &self->held, full)) {
        activate_walk a = {cycle, ks_pod_uid(pod)};
        ks_pods_each(cycle, ns, self->label, group, activate_sibling, &a);
    } else if (assigned == 0 && ks_log_enabled(4)) {
        ks_log(4, "PodGroup %s is held after a rejection: siblings not activated", full);
    }
    return KS_WAIT;
}

static ks_code cs_reserve(void *p, ks_cycle *cycle, const ks_pod *pod, ks_sym node, ks_status *st)
{
    (void)p, (void)cycle, (void)pod, (void)node, (void)st;
    return KS_SUCCESS;
}

/* Unreserve: a member gave up its place (Permit timeout, rejection, failed binding); the others
 * waiting give up theirs. */
static void cs_unreserve(void *p, ks_cycle *cycle, const ks_pod *pod, ks_sym node)
{
    cosched *self = p;
    char full[320];
    (void)node;
    const ks_object *pg = get_pod_group(self, pod, full, sizeof(full));
    if (!pg)
        return;
    ks_object_release(pg);
    group_walk w = {self->label, ks_pod_namespace(pod), group_label(self, pod), 0,
                    "rejection in Unreserve"};
    ks_waiting_pods_each(cycle, walk_waiting, &w);
    set_del(self, &self->permitted, full);
}

/* A pod deleted from a node makes room, unless it is one of the group's own members: those
 * are forgotten when the group is rejected, and must not send the group straight back (the
 * spin the hold is for). Pure: reads the two pods only. */
static ks_queueing_hint cs_pod_deleted(void *p, const ks_pod *pod, const ks_event_info *ev)
{
    const cosched *self = p;
    const ks_pod *gone = ev->old_pod;
    ks_sym group = group_label(self, pod);
    if (gone && group != KS_SYM_ABSENT && ks_pod_namespace(gone) == ks_pod_namespace(pod) &&
        group_label(self, gone) == group)
        return KS_QUEUE_SKIP;
    return KS_QUEUE;
}

/* upstream EventsToRegister: a Pod added (a member may complete its group) and a PodGroup added
 * or updated. kubesched adds what can make room for a group its members were turned away from
 * at Permit (a timeout, a rejection), which scheduler-plugins leaves in unschedulablePods until
 * the 5-minute flush (its users' "minute-long delays"): a Node added, given more allocatable, or
 * relabelled or retainted, and a pod of another group deleted from a node. */
static size_t cs_events(void *p, ks_cluster_event_hint *out, size_t cap)
{
    const cosched *self = p;
    const ks_cluster_event_hint ev[] = {
        {{KS_RES_POD, KS_ACT_ADD}, NULL},
        {{ks_resource_event(self->pod_groups), KS_ACT_ADD | KS_ACT_UPDATE_ANY}, NULL},
        {{KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_ALLOCATABLE | KS_ACT_UPDATE_NODE_LABEL |
                           KS_ACT_UPDATE_NODE_TAINT},
         NULL},
        {{KS_RES_ASSIGNED_POD, KS_ACT_DELETE}, cs_pod_deleted},
    };
    return ks_event_hints_copy(ev, sizeof(ev) / sizeof(ev[0]), out, cap);
}

/* ---- create / destroy, args ---------------------------------------------------------------- */

static void cs_destroy(void *p)
{
    cosched *self = p;
    if (!self)
        return;
    pthread_mutex_destroy(&self->mu);
    free(self->permitted.items);
    free(self->backed_off.items);
    free(self->held.items);
    ks_free(self);
}

static void *cs_create(const ks_args *args, ks_error *err)
{
    if (!KS_HOST_HAS(clock_now_ns)) {
        ks_error_set(err, "needs a kubesched with plugin ABI 1.8 or later (this one offers %u.%u)",
                     ks_host->abi_major, ks_host->abi_minor);
        return NULL;
    }
    cosched *self = ks_alloc(sizeof(*self));
    if (!self) {
        ks_error_set(err, "out of memory");
        return NULL;
    }
    memset(self, 0, sizeof(*self));
    pthread_mutex_init(&self->mu, NULL);
    int64_t wait_s = 60, backoff_s = 0;
    ks_args_get_int(args, "permitWaitingTimeSeconds", &wait_s);
    ks_args_get_int(args, "podGroupBackoffSeconds", &backoff_s);
    self->schedule_timeout_ns = wait_s * NS_PER_S;
    self->backoff_ns = backoff_s * NS_PER_S;
    self->label = ks_intern(POD_GROUP_LABEL);
    self->pod_groups =
        ks_resource_watch("scheduling.x-k8s.io/v1alpha1", "PodGroup", "podgroups", err);
    if (!self->pod_groups) {
        cs_destroy(self);
        return NULL;
    }
    return self;
}

/* upstream New: "PodGroupBackoffSeconds cannot be negative" ("parse arguments failed") */
static int cs_validate_args(const ks_args *args, ks_args_error *e)
{
    int64_t backoff = 0;
    if (ks_args_get_int(args, "podGroupBackoffSeconds", &backoff) == 0 && backoff < 0)
        return ks_args_invalid(e, "podGroupBackoffSeconds",
                               "PodGroupBackoffSeconds cannot be negative");
    return 0;
}

static const ks_arg_field cs_arg_fields[] = {
    {.name = "permitWaitingTimeSeconds", .type = KS_ARG_INT64, .default_json = "60"},
    {.name = "podGroupBackoffSeconds", .type = KS_ARG_INT64, .default_json = "0"},
};
static const ks_args_schema cs_args_schema = KS_ARGS_SCHEMA("CoschedulingArgs", cs_arg_fields);

static const ks_plugin_desc coscheduling_desc = {
    .size = sizeof(ks_plugin_desc),
    .name = PLUGIN_NAME,
    .create = cs_create,
    .destroy = cs_destroy,
    .less = cs_less,
    .pre_filter = cs_pre_filter,
    .post_filter = cs_post_filter,
    .reserve = cs_reserve,
    .unreserve = cs_unreserve,
    .permit = cs_permit,
    .events_with_hints = cs_events,
    .args_schema = &cs_args_schema,
    .validate_args = cs_validate_args,
};

KS_DEFINE_MODULE(&coscheduling_desc);
