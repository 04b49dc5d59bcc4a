/*
 * Bad cluster files, run through the built binary as a user runs it: each case of issue 9 that
 * used to crash, hang, change a decision or drop objects without a word. A file is refused with
 * FILE:LINE:COL and exit 1, or read with a warning per problem and a closing line that counts
 * what was skipped; never a silent exit 0.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simrun.h"

static char dir[64];

static void dir_setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/ks-badmanifest-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void dir_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* Writes dir/name with len bytes of text; returns the path (static, one of two). */
static const char *put_bytes(const char *name, const char *text, size_t len)
{
    static char paths[2][256];
    static int next;
    char *p = paths[next++ % 2];
    snprintf(p, 256, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f, "%s", p);
    cr_assert_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    return p;
}

static const char *put(const char *name, const char *text)
{
    return put_bytes(name, text, strlen(text));
}

typedef struct run_result {
    int rc;
    char *out;
    char err[8192];
} run_result;

static run_result simulate(const char *path, const char *flags)
{
    run_result r;
    char args[512];
    snprintf(args, sizeof(args), "simulate --output json --cluster %s %s", path, flags);
    r.rc = sim_run(args, &r.out, r.err, sizeof(r.err));
    return r;
}

/* The line of stderr that starts with "kubesched: PATH" + rest, exactly. */
#define expect_err_line(r, path, rest)                                                             \
    do {                                                                                           \
        char want_[1024];                                                                          \
        snprintf(want_, sizeof(want_), "kubesched: %s%s\n", (path), (rest));                       \
        cr_expect(strstr((r).err, want_) != NULL, "want line\n%sin stderr:\n%s", want_, (r).err);  \
    } while (0)

static const char *result_of(const run_result *r, const char *name)
{
    cJSON *doc = cJSON_Parse(r->out);
    static char buf[64];
    cr_assert_not_null(doc, "not JSON: %s\nstderr: %s", r->out, r->err);
    const cJSON *e = sim_pod_entry(doc, "default", name);
    snprintf(buf, sizeof(buf), "%s@%s", sim_field(e, "result"),
             sim_field(e, "node") ? sim_field(e, "node") : "-");
    cJSON_Delete(doc);
    return buf;
}

#define NODE(name, cpu)                                                                            \
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: " name                                         \
    "\nstatus:\n  allocatable: {cpu: \"" cpu "\", memory: 8Gi, pods: \"110\"}\n"
#define POD(name, cpu)                                                                             \
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " name                                          \
    "\n  namespace: default\nspec:\n  containers:\n  - name: c\n    resources:\n      "            \
    "requests: {cpu: \"" cpu "\"}\n"

/* ---- refused: exit 1 with the position --------------------------------------------------- */

Test(badmanifest, an_alias_bomb_is_refused_at_the_alias, .init = dir_setup, .fini = dir_teardown)
{
    char bomb[2048];
    size_t off =
        (size_t)snprintf(bomb, sizeof(bomb), "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n");
    for (char c = 'b'; c <= 'i'; c++)
        off += (size_t)snprintf(bomb + off, sizeof(bomb) - off,
                                "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", c, c, c - 1,
                                c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
    const char *path = put("bomb.yaml", bomb);
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 1, "%s", r.err);
    expect_err_line(r, path,
                    ":7:8: aliases copy more than 1000000 values (a \"billion laughs\" document?)");
    free(r.out);
}

Test(badmanifest, deep_nesting_is_refused_at_the_limit, .init = dir_setup, .fini = dir_teardown)
{
    /* 10^5 levels overflowed the stack; 10^6 never finished. */
    for (size_t n = 100000; n <= 1000000; n *= 10) {
        char *text = malloc(n + 16);
        memcpy(text, "items: ", 7);
        memset(text + 7, '[', n);
        const char *path = put_bytes("deep.yaml", text, n + 7);
        run_result r = simulate(path, "");
        cr_expect_eq(r.rc, 1, "%s", r.err);
        expect_err_line(r, path, ":1:1007: nested more than 1000 levels deep");
        free(r.out);
        free(text);
    }
}

Test(badmanifest, a_missing_document_separator_is_a_duplicate_field, .init = dir_setup,
     .fini = dir_teardown)
{
    /* The second node used to replace the first silently. */
    const char *path = put("nosep.yaml", NODE("n1", "4") NODE("n2", "4"));
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 1, "%s", r.err);
    expect_err_line(r, path,
                    ":7:1: duplicate field \"apiVersion\" (first at line 1); is a --- missing "
                    "between two objects?");
    free(r.out);
}

Test(badmanifest, a_nul_byte_is_refused_where_it_is, .init = dir_setup, .fini = dir_teardown)
{
    static const char text[] = "{\"apiVersion\": \"v1\", \"kind\": \"Node\"}\n\n  \0{\"kind\": 1}";
    const char *path = put_bytes("nul.json", text, sizeof(text) - 1);
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 1, "%s", r.err);
    expect_err_line(r, path, ":3:3: a NUL byte: the file is not text (binary or corrupt)");
    free(r.out);
}

Test(badmanifest, a_reader_error_names_its_line_and_column, .init = dir_setup, .fini = dir_teardown)
{
    /* libyaml reports bad bytes by offset: they used to read as line 1:1. */
    const char *path = put("utf8.yaml", NODE("n1", "4") "---\napiVersion: v1\nkind: Pod\n"
                                                        "metadata:\n  name: \"p\xff\"\n");
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 1, "%s", r.err);
    expect_err_line(r, path, ":11:11: invalid leading UTF-8 octet (byte 0xff)");
    free(r.out);
}

/* ---- read: every object there, in every shape ----------------------------------------------- */

Test(badmanifest, a_top_level_sequence_is_read_as_its_objects, .init = dir_setup,
     .fini = dir_teardown)
{
    /* All its nodes used to be lost. */
    const char *path = put("seq.yaml", "- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n"
                                       "  status: {allocatable: {cpu: \"4\", pods: \"9\"}}\n"
                                       "- apiVersion: v1\n  kind: Pod\n"
                                       "  metadata: {name: p, namespace: default}\n"
                                       "  spec: {containers: [{name: c}]}\n");
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect_str_eq(result_of(&r, "p"), "Scheduled@n1");
    cr_expect_str_eq(r.err, "");
    free(r.out);
}

Test(badmanifest, json_objects_one_after_another_are_all_read, .init = dir_setup,
     .fini = dir_teardown)
{
    /* Concatenated, newline-separated and ---separated JSON: the rest used to be ignored. */
    const char *path = put(
        "stream.json", "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"small\"},"
                       "\"status\":{\"allocatable\":{\"cpu\":\"1\",\"pods\":\"9\"}}}"
                       "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"big\"},"
                       "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"pods\":\"9\"}}}\n---\n"
                       "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                       "\"namespace\":\"default\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                       "\"resources\":{\"requests\":{\"cpu\":\"4\"}}}]}}\n");
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect_str_eq(result_of(&r, "p"), "Scheduled@big");
    free(r.out);
}

Test(badmanifest, a_repeated_key_in_json_is_an_error_with_its_position, .init = dir_setup,
     .fini = dir_teardown)
{
    const char *path = put("dup.json", "{\"apiVersion\": \"v1\", \"kind\": \"Node\",\n"
                                       " \"metadata\": {\"name\": \"a\", \"name\": \"b\"}}\n");
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 1, "%s", r.err);
    expect_err_line(r, path, ":2:28: duplicate field \"name\" (first at line 2)");
    free(r.out);
}

/* ---- left out or warned about, never in silence ------------------------------------------- */

Test(badmanifest, a_mistyped_kind_is_left_out_with_a_warning_and_counted, .init = dir_setup,
     .fini = dir_teardown)
{
    /* `kind: Nodes`, `kind: pod` and a missing kind were counted and never reported. */
    const char *path =
        put("kinds.yaml", NODE("n1", "4") "---\napiVersion: v1\nkind: Nodes\n"
                                          "metadata: {name: big}\n---\n"
                                          "apiVersion: v1\nkind: pod\n"
                                          "metadata: {name: q, namespace: default}\n"
                                          "---\napiVersion: v1\n"
                                          "metadata: {name: nokind}\n"
                                          "---\napiVersion: v1\nkind: ConfigMap\n"
                                          "metadata: {name: cm}\n---\n" POD("p", "1"));
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect_str_eq(result_of(&r, "p"), "Scheduled@n1");
    expect_err_line(r, path,
                    ":9:1: warning: Nodes big: no kind \"Nodes\" is registered for version \"v1\" "
                    "(did you mean \"Node\"?): the object is left out");
    expect_err_line(r, path,
                    ":13:1: warning: pod default/q: no kind \"pod\" is registered for version "
                    "\"v1\" (did you mean \"Pod\"?): the object is left out");
    expect_err_line(r, path, ":16:1: warning: kind not set: the object is left out");
    expect_err_line(r, path,
                    ": skipped 4 objects; 1 of kinds kubesched does not read (1 ConfigMap); 3 "
                    "without a kind or of an unknown kind (warnings above); 3 warnings about the "
                    "file above (--strict makes them errors)");
    free(r.out);
    /* --strict: the same file is refused. */
    r = simulate(path, "--strict");
    cr_expect_eq(r.rc, 1, "%s", r.err);
    expect_err_line(r, path,
                    ":9:1: error: Nodes big: no kind \"Nodes\" is registered for version \"v1\" "
                    "(did you mean \"Node\"?): the object is left out");
    expect_err_line(r, path, ": 3 errors in the objects (reported above)");
    free(r.out);
}

Test(badmanifest, a_misspelt_field_is_a_warning_at_its_line, .init = dir_setup,
     .fini = dir_teardown)
{
    /* `allocateable:` left a node with no resources, without a word. */
    const char *path =
        put("typo.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\nstatus:\n"
                         "  allocateable: {cpu: \"4\"}\n---\n" POD("p", "1"));
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 0, "%s", r.err);
    expect_err_line(r, path, ":6:3: warning: Node n1: unknown field \"status.allocateable\"");
    expect_err_line(r, path,
                    ": skipped 0 objects; 1 warning about the file above (--strict makes them "
                    "errors)");
    free(r.out);
    r = simulate(path, "--strict");
    cr_expect_eq(r.rc, 1, "%s", r.err);
    expect_err_line(r, path, ":6:3: error: Node n1: unknown field \"status.allocateable\"");
    free(r.out);
}

Test(badmanifest, wrong_types_are_errors_naming_line_field_and_type, .init = dir_setup,
     .fini = dir_teardown)
{
    /* Each was ignored as if absent: a string `true` left the node schedulable, a spec that is
     * a string or containers that are a mapping made a pod without requests. */
    const char *path = put(
        "types.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec:\n  unschedulable: 'true'\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: default}\nspec: big\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: default}\nspec:\n"
        "  containers: {name: c}\n  affinity: none\n  tolerations: {key: k}\n"
        "  topologySpreadConstraints: zone\n");
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 1, "%s", r.err);
    expect_err_line(r, path,
                    ":5:3: error: Node n1: json: cannot unmarshal string into Go struct field "
                    "NodeSpec.spec.unschedulable of type bool");
    expect_err_line(r, path,
                    ":10:1: error: Pod default/a: json: cannot unmarshal string into Go struct "
                    "field Pod.spec of type v1.PodSpec");
    expect_err_line(r, path,
                    ":16:3: error: Pod default/b: json: cannot unmarshal object into Go struct "
                    "field PodSpec.spec.containers of type []v1.Container");
    expect_err_line(r, path,
                    ":17:3: error: Pod default/b: json: cannot unmarshal string into Go struct "
                    "field PodSpec.spec.affinity of type v1.Affinity");
    expect_err_line(r, path,
                    ":18:3: error: Pod default/b: json: cannot unmarshal object into Go struct "
                    "field PodSpec.spec.tolerations of type []v1.Toleration");
    expect_err_line(r, path,
                    ":19:3: error: Pod default/b: json: cannot unmarshal string into Go struct "
                    "field PodSpec.spec.topologySpreadConstraints of type "
                    "[]v1.TopologySpreadConstraint");
    expect_err_line(r, path, ": 6 errors in the objects (reported above)");
    cr_expect_str_eq(r.out, "");
    free(r.out);
}

Test(badmanifest, one_bad_item_of_a_list_is_reported_at_its_line, .init = dir_setup,
     .fini = dir_teardown)
{
    /* kubectl's List output: the bad item is found by its own line, not the List's. */
    const char *path = put("list.yaml", "apiVersion: v1\nkind: List\nitems:\n"
                                        "- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n"
                                        "- apiVersion: v1\n  kind: Node\n  metadata: {name: n2}\n"
                                        "  status: {capacity: {cpu: [4]}}\n");
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 1, "%s", r.err);
    expect_err_line(r, path,
                    ":10:23: error: Node n2: json: cannot unmarshal array into Go struct field "
                    "NodeStatus.status.capacity of type resource.Quantity");
    free(r.out);
}

/* ---- values the API server refuses: an error at the field, not a different decision --------- */

/* Runs a cluster of one 8-CPU node and the given pending pod; expects exit 1 and the message. */
static void expect_refused_pod(const char *pod_spec, const char *want)
{
    char text[4096];
    snprintf(text, sizeof(text),
             NODE("n1", "8") "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: "
                             "default, labels: {app: a}}\nspec:\n%s",
             pod_spec);
    const char *path = put("values.yaml", text);
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 1, "%s", r.err);
    expect_err_line(r, path, want);
    cr_expect_str_eq(r.out, "");
    free(r.out);
}

Test(badmanifest, a_negative_quantity_is_refused, .init = dir_setup, .fini = dir_teardown)
{
    /* It was accepted, and lowered the node's requested sum. */
    expect_refused_pod("  containers:\n  - name: c\n    resources: {requests: {cpu: \"-2\"}}\n",
                       ":14:28: error: Pod default/p: spec.containers[0].resources.requests.cpu: "
                       "Invalid value: \"-2\": must be greater than or equal to 0");
    const char *path = put("negnode.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                                           "status: {allocatable: {memory: -1Gi}}\n");
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 1, "%s", r.err);
    expect_err_line(
        r, path,
        ":4:24: error: Node n1: status.allocatable.memory: Invalid value: \"-1Gi\": must "
        "be greater than or equal to 0");
    free(r.out);
}

Test(badmanifest, a_host_port_out_of_range_is_refused, .init = dir_setup, .fini = dir_teardown)
{
    /* hostPort 70000 was accepted, and the pod was then retried 141 times. */
    expect_refused_pod(
        "  containers:\n  - name: c\n    ports: [{containerPort: 80, hostPort: "
        "70000}]\n",
        ":14:33: error: Pod default/p: spec.containers[0].ports[0].hostPort: Invalid "
        "value: 70000: must be between 1 and 65535, inclusive");
}

Test(badmanifest, a_max_skew_below_one_is_refused, .init = dir_setup, .fini = dir_teardown)
{
    expect_refused_pod("  containers: [{name: c}]\n  topologySpreadConstraints:\n  - {maxSkew: "
                       "0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: "
                       "{matchLabels: {app: a}}}\n",
                       ":14:6: error: Pod default/p: spec.topologySpreadConstraints[0].maxSkew: "
                       "Invalid value: 0: must be greater than zero");
    expect_refused_pod("  containers: [{name: c}]\n  topologySpreadConstraints:\n  - {maxSkew: "
                       "-1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n",
                       ":14:6: error: Pod default/p: spec.topologySpreadConstraints[0].maxSkew: "
                       "Invalid value: -1: must be greater than zero");
}

Test(badmanifest, a_weight_out_of_range_is_refused, .init = dir_setup, .fini = dir_teardown)
{
    expect_refused_pod(
        "  containers: [{name: c}]\n  affinity:\n    nodeAffinity:\n      "
        "preferredDuringSchedulingIgnoredDuringExecution:\n      - {weight: 101, preference: "
        "{matchExpressions: [{key: a, operator: Exists}]}}\n",
        ":16:10: error: Pod default/p: "
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
        "Invalid value: 101: must be in the range 1-100");
    expect_refused_pod(
        "  containers: [{name: c}]\n  affinity:\n    podAntiAffinity:\n      "
        "preferredDuringSchedulingIgnoredDuringExecution:\n      - {weight: 0, podAffinityTerm: "
        "{topologyKey: zone, labelSelector: {matchLabels: {app: a}}}}\n",
        ":16:10: error: Pod default/p: "
        "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
        "Invalid value: 0: must be in the range 1-100");
}

Test(badmanifest, json_problems_have_positions_and_many_are_summed_up, .init = dir_setup,
     .fini = dir_teardown)
{
    /* A JSON value with a problem is read again by the YAML reader for the position. */
    const char *path = put("warn.json", "{\"apiVersion\": \"v1\", \"kind\": \"Node\",\n"
                                        " \"metadata\": {\"name\": \"n1\", \"nmae\": \"x\"}}\n");
    run_result r = simulate(path, "");
    cr_expect_eq(r.rc, 0, "%s", r.err);
    expect_err_line(r, path, ":2:29: warning: Node n1: unknown field \"metadata.nmae\"");
    free(r.out);
    /* 60 misspelt fields: 50 printed, then the closing line says the rest were not. */
    char text[8192];
    size_t off = (size_t)snprintf(text, sizeof(text),
                                  "apiVersion: v1\nkind: Node\nmetadata:\n"
                                  "  name: n1\n");
    for (int i = 0; i < 60; i++)
        off += (size_t)snprintf(text + off, sizeof(text) - off, "x%d: 1\n", i);
    path = put("many.yaml", text);
    r = simulate(path, "");
    cr_expect_eq(r.rc, 0, "%s", r.err);
    expect_err_line(r, path, ":54:1: warning: Node n1: unknown field \"x49\"");
    cr_expect(strstr(r.err, "unknown field \"x50\"") == NULL, "%s", r.err);
    expect_err_line(r, path,
                    ": skipped 0 objects; 60 warnings about the file above (--strict makes them "
                    "errors); only the first 50 problems were printed");
    free(r.out);
}
