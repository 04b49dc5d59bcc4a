/* NodeAffinity: upstream nodeaffinity/node_affinity_test.go (TestNodeAffinity,
 * TestNodeAffinityPriority) with v1.34 reasons, plus the args parsing, the parse-error rules of
 * component-helpers nodeaffinity, and the registered events. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

extern const ks_plugin_desc ks_plugin_node_affinity;

TestSuite(node_affinity, .init = th_init, .fini = th_fini);

#define UNR KS_UNSCHEDULABLE_AND_UNRESOLVABLE
#define ERR_POD "node(s) didn't match Pod's node affinity/selector"
#define ERR_ENFORCED "node(s) didn't match scheduler-enforced node affinity"
#define ERR_CONFLICT "pod affinity terms conflict"
#define ERR_EXCLUDED "node(s) didn't satisfy plugin(s) [NodeAffinity]"

/* Requirement and term builders (JSON text). */
#define REQ(k, op, vals) "{'key':'" k "','operator':'" op "','values':[" vals "]}"
#define EXISTS(k) "{'key':'" k "','operator':'Exists'}"
#define NAME_IN(v) "{'key':'metadata.name','operator':'In','values':['" v "']}"
#define EXPRS(...) "{'matchExpressions':[" __VA_ARGS__ "]}"
#define FIELDS(...) "{'matchFields':[" __VA_ARGS__ "]}"
#define REQUIRED(...)                                                                              \
    "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"                \
    "{'nodeSelectorTerms':[" __VA_ARGS__ "]}}}"
#define PREF(w, term) "{'weight':" #w ",'preference':" term "}"
#define PREFERRED(...)                                                                             \
    "'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':[" __VA_ARGS__  \
    "]}}"

static int seq;

/* A pod whose spec members are `spec` (no braces; may be empty). */
static ks_pod *pod(const char *spec)
{
    char json[4096];
    seq++;
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p%d','namespace':'default','uid':'p%d'},"
             "'spec':{'containers':[{'name':'c','image':'pause'}]%s%s}}",
             seq, seq, spec[0] ? "," : "", spec);
    return th_pod(json);
}

static void add_node(th_cluster *c, const char *name, const char *labels)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','labels':{%s}},"
             "'status':{'allocatable':{'cpu':'4','memory':'8Gi','pods':'110'}}}",
             name, labels);
    th_cluster_add_node(c, json);
}

/* Runs PreFilter and Filter for the pod on node `name` labelled `labels`. */
static ks_code filter_on(const char *args, const char *spec, const char *name, const char *labels,
                         char *r, size_t len)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_affinity, args);
    th_cluster *c = th_cluster_new();
    add_node(c, name, labels);
    return th_filter(p, c, pod(spec), name, r, len);
}

static ks_code filter(const char *spec, const char *labels, char *r, size_t len)
{
    return filter_on(NULL, spec, "node1", labels, r, len);
}

#define PASSES(spec, labels)                                                                       \
    do {                                                                                           \
        char r_[256];                                                                              \
        cr_assert_eq(filter(spec, labels, r_, sizeof(r_)), KS_SUCCESS, "%s", r_);                  \
    } while (0)
#define REJECTS(spec, labels)                                                                      \
    do {                                                                                           \
        char r_[256];                                                                              \
        cr_assert_eq(filter(spec, labels, r_, sizeof(r_)), UNR);                                   \
        cr_assert_str_eq(r_, ERR_POD);                                                             \
    } while (0)

/* ---- Filter: nodeSelector ------------------------------------------------------------------ */

Test(node_affinity, node_selector_rejects_node_missing_labels)
{
    REJECTS("'nodeSelector':{'foo':'bar'}", "");
}

Test(node_affinity, node_selector_matches_same_labels)
{
    PASSES("'nodeSelector':{'foo':'bar'}", "'foo':'bar'");
}

Test(node_affinity, node_selector_matches_superset_of_labels)
{
    PASSES("'nodeSelector':{'foo':'bar'}", "'foo':'bar','baz':'blah'");
}

Test(node_affinity, node_selector_rejects_subset_of_labels)
{
    REJECTS("'nodeSelector':{'foo':'bar','baz':'blah'}", "'foo':'bar'");
}

/* ---- Filter: required node affinity --------------------------------------------------------- */

Test(node_affinity, in_operator_matches)
{
    PASSES(REQUIRED(EXPRS(REQ("foo", "In", "'bar','value2'"))), "'foo':'bar'");
}

Test(node_affinity, gt_operator_compares_integers)
{
    PASSES(REQUIRED(EXPRS(REQ("kernel-version", "Gt", "'0204'"))), "'kernel-version':'0206'");
    REJECTS(REQUIRED(EXPRS(REQ("kernel-version", "Gt", "'0206'"))), "'kernel-version':'0206'");
    REJECTS(REQUIRED(EXPRS(REQ("kernel-version", "Gt", "'1'"))), "'kernel-version':'abc'");
    REJECTS(REQUIRED(EXPRS(REQ("kernel-version", "Gt", "'1'"))), "");
}

Test(node_affinity, lt_operator_compares_integers)
{
    PASSES(REQUIRED(EXPRS(REQ("cores", "Lt", "'8'"))), "'cores':'-3'");
    REJECTS(REQUIRED(EXPRS(REQ("cores", "Lt", "'8'"))), "'cores':'8'");
    /* strconv.ParseInt: out of int64 range is an error, not a clamp. */
    REJECTS(REQUIRED(EXPRS(REQ("cores", "Lt", "'8'"))), "'cores':'-99999999999999999999'");
}

Test(node_affinity, not_in_operator_matches_other_value_and_missing_label)
{
    PASSES(REQUIRED(EXPRS(REQ("mem-type", "NotIn", "'DDR','DDR2'"))), "'mem-type':'DDR3'");
    PASSES(REQUIRED(EXPRS(REQ("mem-type", "NotIn", "'DDR','DDR2'"))), "");
    REJECTS(REQUIRED(EXPRS(REQ("mem-type", "NotIn", "'DDR','DDR2'"))), "'mem-type':'DDR2'");
}

Test(node_affinity, exists_operator_matches)
{
    PASSES(REQUIRED(EXPRS(EXISTS("GPU"))), "'GPU':'NVIDIA-GRID-K1'");
}

Test(node_affinity, does_not_exist_operator)
{
    PASSES(REQUIRED(EXPRS("{'key':'GPU','operator':'DoesNotExist'}")), "'foo':'bar'");
    REJECTS(REQUIRED(EXPRS("{'key':'GPU','operator':'DoesNotExist'}")), "'GPU':'x'");
}

Test(node_affinity, rejects_node_not_matching_in_values)
{
    REJECTS(REQUIRED(EXPRS(REQ("foo", "In", "'value1','value2'"))), "'foo':'bar'");
}

Test(node_affinity, empty_match_expressions_match_no_node)
{
    REJECTS(REQUIRED(EXPRS("")), "'foo':'bar'");
}

Test(node_affinity, empty_node_selector_terms_match_no_node)
{
    REJECTS(REQUIRED(""), "'foo':'bar'");
}

/* PreFilter / PreScore called directly: their Skip paths touch no cycle state. */
static ks_code pre_filter_code(ks_pod *p)
{
    void *self = ks_plugin_node_affinity.create(NULL, NULL);
    cr_assert_not_null(self);
    ks_code code = ks_plugin_node_affinity.pre_filter(self, NULL, p, NULL, NULL);
    ks_plugin_node_affinity.destroy(self);
    return code;
}

static ks_code pre_score_code(ks_pod *p)
{
    void *self = ks_plugin_node_affinity.create(NULL, NULL);
    cr_assert_not_null(self);
    ks_code code = ks_plugin_node_affinity.pre_score(self, NULL, p, NULL, 0, NULL);
    ks_plugin_node_affinity.destroy(self);
    return code;
}

Test(node_affinity, pod_without_affinity_skips_prefilter)
{
    char r[256];
    cr_assert_eq(pre_filter_code(pod("")), KS_SKIP);
    cr_assert_eq(filter("", "'foo':'bar'", r, sizeof(r)), KS_SUCCESS);
}

Test(node_affinity, affinity_without_required_skips_prefilter)
{
    cr_assert_eq(pre_filter_code(pod("'affinity':{'nodeAffinity':{}}")), KS_SKIP);
    PASSES("'affinity':{'nodeAffinity':{}}", "'foo':'bar'");
}

Test(node_affinity, match_expressions_are_anded)
{
    PASSES(REQUIRED(EXPRS(EXISTS("GPU") "," REQ("GPU", "NotIn", "'AMD','INTER'"))),
           "'GPU':'NVIDIA-GRID-K1'");
    REJECTS(REQUIRED(EXPRS(EXISTS("GPU") "," REQ("GPU", "In", "'AMD','INTER'"))),
            "'GPU':'NVIDIA-GRID-K1'");
}

Test(node_affinity, node_selector_terms_are_ored)
{
    PASSES(REQUIRED(EXPRS(REQ("foo", "In", "'bar','value2'")) "," EXPRS(
               REQ("diffkey", "In", "'wrong','value2'"))),
           "'foo':'bar'");
}

Test(node_affinity, affinity_and_node_selector_must_both_match)
{
    PASSES("'nodeSelector':{'foo':'bar'}," REQUIRED(EXPRS(EXISTS("foo"))), "'foo':'bar'");
    REJECTS("'nodeSelector':{'foo':'bar'}," REQUIRED(EXPRS(EXISTS("foo"))), "'foo':'barrrrrr'");
}

Test(node_affinity, invalid_value_makes_term_match_nothing)
{
    /* NotIn would match, but the value is not a valid label value: the term is a parse error. */
    REJECTS(REQUIRED(EXPRS(REQ("foo", "NotIn", "'invalid value: ___@#$%^'"))), "'foo':'bar'");
}

Test(node_affinity, invalid_term_does_not_spoil_valid_ones)
{
    PASSES(REQUIRED(EXPRS(REQ("in valid", "Exists", "")) "," EXPRS(EXISTS("foo"))), "'foo':'bar'");
    REJECTS(REQUIRED(EXPRS(REQ("in valid", "Exists", "")) "," EXPRS(EXISTS("zzz"))), "'foo':'bar'");
}

Test(node_affinity, requirement_parse_errors_match_nothing)
{
    /* In without values, Exists with values, Gt with two values or a non-integer. */
    REJECTS(REQUIRED(EXPRS(REQ("foo", "NotIn", ""))), "'foo':'bar'");
    REJECTS(REQUIRED(EXPRS(REQ("foo", "Exists", "'bar'"))), "'foo':'bar'");
    REJECTS(REQUIRED(EXPRS(REQ("n", "Gt", "'1','2'"))), "'n':'5'");
    REJECTS(REQUIRED(EXPRS(REQ("n", "Gt", "'one'"))), "'n':'5'");
    REJECTS(REQUIRED(EXPRS(EXISTS("-bad-key-"))), "'-bad-key-':'x'");
    PASSES(REQUIRED(EXPRS(EXISTS("example.com/good-key"))), "'example.com/good-key':'x'");
    REJECTS(REQUIRED(EXPRS(EXISTS("Example.com/key"))), "'Example.com/key':'x'");
}

/* ---- Filter: matchFields and the PreFilterResult ------------------------------------------- */

Test(node_affinity, match_fields_in_matches_node_name)
{
    char r[256];
    cr_assert_eq(filter_on(NULL, REQUIRED(FIELDS(NAME_IN("node1"))), "node1", "", r, sizeof(r)),
                 KS_SUCCESS);
}

Test(node_affinity, match_fields_restrict_nodes_in_prefilter_result)
{
    char r[256];
    cr_assert_eq(filter_on(NULL, REQUIRED(FIELDS(NAME_IN("node1"))), "node2", "", r, sizeof(r)),
                 UNR);
    cr_assert_str_eq(r, ERR_EXCLUDED);
}

Test(node_affinity, match_fields_not_matching_but_other_term_matching)
{
    char r[256];
    /* The second term has no name field: no PreFilterResult, and it matches node2. */
    cr_assert_eq(filter_on(NULL,
                           REQUIRED("{'matchFields':[" NAME_IN("node1") "," NAME_IN(
                               "node2") "]}," EXPRS(REQ("foo", "In", "'bar'"))),
                           "node2", "'foo':'bar'", r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
}

Test(node_affinity, one_term_with_fields_and_expressions_needs_both)
{
    char r[256];
    const char *spec = REQUIRED("{'matchFields':[" NAME_IN("node1") "],'matchExpressions':[" REQ(
        "foo", "In", "'bar'") "]}");
    cr_assert_eq(filter_on(NULL, spec, "node2", "'foo':'bar'", r, sizeof(r)), UNR);
    cr_assert_str_eq(r, ERR_EXCLUDED);
    cr_assert_eq(filter_on(NULL, spec, "node1", "'foo':'bar'", r, sizeof(r)), KS_SUCCESS);
    cr_assert_eq(filter_on(NULL, spec, "node1", "'foo':'baz'", r, sizeof(r)), UNR);
    cr_assert_str_eq(r, ERR_POD);
}

Test(node_affinity, two_terms_neither_matching)
{
    char r[256];
    cr_assert_eq(filter_on(NULL,
                           REQUIRED(FIELDS(NAME_IN("node1")) "," EXPRS(
                               REQ("foo", "In", "'not-match-to-bar'"))),
                           "node2", "'foo':'bar'", r, sizeof(r)),
                 UNR);
    cr_assert_str_eq(r, ERR_POD);
}

Test(node_affinity, two_name_terms_union_their_nodes)
{
    char r[256];
    const char *spec = REQUIRED(FIELDS(NAME_IN("node1")) "," FIELDS(NAME_IN("node2")));
    cr_assert_eq(filter_on(NULL, spec, "node2", "", r, sizeof(r)), KS_SUCCESS, "%s", r);
    cr_assert_eq(filter_on(NULL, spec, "node1", "", r, sizeof(r)), KS_SUCCESS, "%s", r);
    cr_assert_eq(filter_on(NULL, spec, "node3", "", r, sizeof(r)), UNR);
    cr_assert_str_eq(r, ERR_EXCLUDED);
}

Test(node_affinity, conflicting_name_fields_fail_prefilter)
{
    char r[256];
    cr_assert_eq(filter_on(NULL,
                           REQUIRED("{'matchFields':[" NAME_IN("node1") "," NAME_IN("node2") "]}"),
                           "node2", "'foo':'bar'", r, sizeof(r)),
                 UNR);
    cr_assert_str_eq(r, ERR_CONFLICT);
}

Test(node_affinity, match_fields_not_in_excludes_node_by_name)
{
    char r[256];
    const char *spec =
        REQUIRED(FIELDS("{'key':'metadata.name','operator':'NotIn','values':['node1']}"));
    cr_assert_eq(filter_on(NULL, spec, "node1", "", r, sizeof(r)), UNR);
    cr_assert_str_eq(r, ERR_POD);
    cr_assert_eq(filter_on(NULL, spec, "node2", "", r, sizeof(r)), KS_SUCCESS);
}

Test(node_affinity, match_fields_need_exactly_one_value)
{
    char r[256];
    cr_assert_eq(filter_on(NULL,
                           REQUIRED(FIELDS("{'key':'metadata.name','operator':'In',"
                                           "'values':['node1','node2']}")),
                           "node1", "", r, sizeof(r)),
                 UNR);
}

/* ---- Filter: args.addedAffinity ------------------------------------------------------------- */

#define ADDED_NAME_NODE2                                                                           \
    "{'addedAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':"     \
    "[" FIELDS(NAME_IN("node2")) "]}}}"

Test(node_affinity, matches_added_affinity_and_pod_affinity)
{
    char r[256];
    cr_assert_eq(filter_on(ADDED_NAME_NODE2, REQUIRED(EXPRS(REQ("zone", "In", "'foo'"))), "node2",
                           "'zone':'foo'", r, sizeof(r)),
                 KS_SUCCESS, "%s", r);
}

Test(node_affinity, matches_added_affinity_but_not_pod_affinity)
{
    char r[256];
    cr_assert_eq(filter_on(ADDED_NAME_NODE2, REQUIRED(EXPRS(REQ("zone", "In", "'bar'"))), "node2",
                           "'zone':'foo'", r, sizeof(r)),
                 UNR);
    cr_assert_str_eq(r, ERR_POD);
}

Test(node_affinity, rejects_node_not_matching_added_affinity)
{
    char r[256];
    const char *args = "{'addedAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
                       "{'nodeSelectorTerms':[" EXPRS(REQ("zone", "In", "'bar'")) "]}}}";
    cr_assert_eq(filter_on(args, "", "node2", "'zone':'foo'", r, sizeof(r)), UNR);
    cr_assert_str_eq(r, ERR_ENFORCED);
    /* Checked before the pod's own affinity. */
    cr_assert_eq(filter_on(args, "'nodeSelector':{'a':'b'}", "node2", "'zone':'foo'", r, sizeof(r)),
                 UNR);
    cr_assert_str_eq(r, ERR_ENFORCED);
}

Test(node_affinity, added_required_without_terms_matches_no_node)
{
    char r[256];
    const char *args = "{'addedAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{}}}";
    cr_assert_eq(filter_on(args, "", "node2", "'zone':'foo'", r, sizeof(r)), UNR);
    cr_assert_str_eq(r, ERR_ENFORCED);
}

Test(node_affinity, added_preferred_only_keeps_prefilter_skip)
{
    char r[256];
    const char *args = "{'addedAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':[" PREF(
        3, EXPRS(REQ("key", "In", "'value'"))) "]}}";
    cr_assert_eq(filter_on(args, "", "node2", "'zone':'foo'", r, sizeof(r)), KS_SUCCESS);
}

Test(node_affinity, invalid_added_affinity_fails_create_naming_the_field)
{
    char err[512];
    const char *args = "{'addedAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':[" PREF(
        2, EXPRS(REQ("invalid key", "In", "'bar'"))) "]}}";
    cr_assert_null(th_plugin_try_new(&ks_plugin_node_affinity, args, err, sizeof(err)));
    cr_assert_str_eq(err, "NodeAffinity: parsing addedAffinity.preferredDuringSchedulingIgnored"
                          "DuringExecution: [0].matchExpressions[0].key: Invalid value: "
                          "\"invalid key\": name part must consist of alphanumeric characters, "
                          "'-', '_' or '.', and must start and end with an alphanumeric character "
                          "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                          "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
}

Test(node_affinity, invalid_added_required_lists_every_error)
{
    char err[512];
    const char *args =
        "{'addedAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
        "{'nodeSelectorTerms':[" EXPRS(REQ("a", "In", "")) "," EXPRS(REQ("n", "Gt", "'x'")) "]}}}";
    cr_assert_null(th_plugin_try_new(&ks_plugin_node_affinity, args, err, sizeof(err)));
    cr_assert_str_eq(err,
                     "NodeAffinity: parsing addedAffinity.requiredDuringSchedulingIgnoredDuring"
                     "Execution: [nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: "
                     "[]string(nil): for 'in', 'notin' operators, values set can't be empty, "
                     "nodeSelectorTerms[1].matchExpressions[0].values[0]: Invalid value: \"x\": "
                     "for 'Gt', 'Lt' operators, the value must be an integer]");
}

Test(node_affinity, unknown_added_operator_fails_create)
{
    char err[512];
    const char *args = "{'addedAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
                       "{'nodeSelectorTerms':[" EXPRS(REQ("a", "Has", "'b'")) "]}}}";
    cr_assert_null(th_plugin_try_new(&ks_plugin_node_affinity, args, err, sizeof(err)));
    cr_assert(strstr(err, "Unsupported value: \"Has\""), "%s", err);
}

/* ---- Score ---------------------------------------------------------------------------------- */

#define LABEL1 "'foo':'bar'"
#define LABEL2 "'key':'value'"
#define LABEL3 "'az':'az1'"
#define LABEL4 "'abc':'az11','def':'az22'"
#define LABEL5 "'foo':'bar','key':'value','az':'az1'"
#define AFFINITY1 PREFERRED(PREF(2, EXPRS(REQ("foo", "In", "'bar'"))))
#define AFFINITY2                                                                                  \
    PREFERRED(PREF(2, EXPRS(REQ("foo", "In", "'bar'"))) "," PREF(                                  \
        4, EXPRS(REQ("key", "In", "'value'"))) "," PREF(5,                                         \
                                                        EXPRS(REQ("foo", "In", "'bar'") "," REQ(   \
                                                            "key", "In",                           \
                                                            "'value'") "," REQ("az", "In",         \
                                                                               "'az1'"))))

/* Scores three (or two, when l3 is NULL) nodes. */
static ks_code score3(const char *args, const char *spec, const char *l1, const char *l2,
                      const char *l3, int64_t *raw, int64_t *norm)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_affinity, args);
    th_cluster *c = th_cluster_new();
    add_node(c, "node1", l1);
    add_node(c, "node2", l2);
    if (l3)
        add_node(c, "node3", l3);
    return th_score(p, c, pod(spec), raw, norm);
}

Test(node_affinity, all_nodes_score_zero_without_node_affinity)
{
    int64_t raw[3], norm[3];
    cr_assert_eq(score3(NULL, "", LABEL1, LABEL2, LABEL3, raw, norm), KS_SUCCESS);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(norm[i], 0);
    cr_assert_eq(pre_score_code(pod("")), KS_SKIP);
}

Test(node_affinity, broken_preferred_term_fails_prescore)
{
    int64_t raw[3], norm[3];
    cr_assert_eq(score3(NULL, PREFERRED(PREF(2, EXPRS(REQ("invalid key", "In", "'bar'")))), LABEL1,
                        LABEL2, NULL, raw, norm),
                 KS_ERROR);
}

Test(node_affinity, broken_zero_weight_term_is_ignored)
{
    int64_t raw[2], norm[2];
    cr_assert_eq(score3(NULL,
                        PREFERRED(PREF(0, EXPRS(REQ("invalid key", "In", "'bar'"))) "," PREF(
                            2, EXPRS(REQ("foo", "In", "'bar'")))),
                        LABEL1, LABEL2, NULL, raw, norm),
                 KS_SUCCESS);
    cr_assert_eq(raw[0], 2);
    cr_assert_eq(norm[0], 100);
    cr_assert_eq(norm[1], 0);
}

Test(node_affinity, no_node_matches_preferred_terms)
{
    int64_t raw[3], norm[3];
    cr_assert_eq(score3(NULL, AFFINITY1, LABEL4, LABEL2, LABEL3, raw, norm), KS_SUCCESS);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(raw[i], 0);
        cr_assert_eq(norm[i], 0);
    }
}

Test(node_affinity, only_matching_node_gets_max_score)
{
    int64_t raw[3], norm[3];
    cr_assert_eq(score3(NULL, AFFINITY1, LABEL1, LABEL2, LABEL3, raw, norm), KS_SUCCESS);
    cr_assert_eq(raw[0], 2);
    cr_assert_eq(norm[0], 100);
    cr_assert_eq(norm[1], 0);
    cr_assert_eq(norm[2], 0);
}

Test(node_affinity, scores_sum_weights_and_normalize_to_max)
{
    int64_t raw[3], norm[3];
    /* node1 {foo}: 2; node5 {foo,key,az}: 2+4+5 = 11; node2 {key}: 4. */
    cr_assert_eq(score3(NULL, AFFINITY2, LABEL1, LABEL5, LABEL2, raw, norm), KS_SUCCESS);
    cr_assert_eq(raw[0], 2);
    cr_assert_eq(raw[1], 11);
    cr_assert_eq(raw[2], 4);
    cr_assert_eq(norm[0], 18);
    cr_assert_eq(norm[1], 100);
    cr_assert_eq(norm[2], 36);
}

Test(node_affinity, added_preferred_affinity_scores_pod_without_affinity)
{
    int64_t raw[2], norm[2];
    const char *args = "{'addedAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':[" PREF(
        2, EXPRS(REQ("foo", "In", "'bar'"))) "]}}";
    cr_assert_eq(score3(args, "", LABEL1, LABEL2, NULL, raw, norm), KS_SUCCESS);
    cr_assert_eq(norm[0], 100);
    cr_assert_eq(norm[1], 0);
}

Test(node_affinity, added_and_pod_preferred_affinity_add_up)
{
    int64_t raw[3], norm[3];
    const char *args = "{'addedAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':[" PREF(
        3, EXPRS(REQ("key", "In", "'value'"))) "]}}";
    cr_assert_eq(score3(args, AFFINITY1, LABEL1, LABEL2, LABEL5, raw, norm), KS_SUCCESS);
    cr_assert_eq(raw[0], 2);
    cr_assert_eq(raw[1], 3);
    cr_assert_eq(raw[2], 5);
    cr_assert_eq(norm[0], 40);
    cr_assert_eq(norm[1], 60);
    cr_assert_eq(norm[2], 100);
}

Test(node_affinity, preferred_match_fields_score_by_node_name)
{
    int64_t raw[2], norm[2];
    cr_assert_eq(
        score3(NULL, PREFERRED(PREF(7, FIELDS(NAME_IN("node2")))), LABEL1, LABEL2, NULL, raw, norm),
        KS_SUCCESS);
    cr_assert_eq(raw[0], 0);
    cr_assert_eq(raw[1], 7);
    cr_assert_eq(norm[1], 100);
}

/* ---- Events --------------------------------------------------------------------------------- */
