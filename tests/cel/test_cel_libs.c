/*
 * The test tables of Kubernetes' CEL libraries and of cel-go's extensions that DRA's environment
 * enables, ported: k8s.io/apiserver/pkg/cel/library quantity_test.go and semver_test.go (v0.37.2),
 * the documented examples of its lists.go and regex.go, cel-go v0.29.2 ext/sets_test.go and
 * ext/strings_test.go's cases for the functions DRA selectors use. Each case is an expression and
 * either the expression its value must equal (same kind, CEL equality) or a substring of the
 * expected error. Where upstream expects a checker (compile-time) error we have no checker for,
 * the case expects the runtime error our evaluator gives instead (marked "checker:").
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cel/cel.h"

typedef struct cel_case {
    const char *name;
    const char *expr;
    const char *want;     /* an expression for the expected value, or NULL */
    const char *want_err; /* a substring of the expected (compile or runtime) error */
} cel_case;

static bool same_kind_equal(const ks_cel_value *a, const ks_cel_value *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == KS_CEL_LIST) {
        if (a->list->n != b->list->n)
            return false;
        for (size_t i = 0; i < a->list->n; i++)
            if (!same_kind_equal(&a->list->items[i], &b->list->items[i]))
                return false;
        return true;
    }
    return ks_cel_equal(a, b);
}

/* Values may point into the program (its constants) and into the arena: the caller frees *prog
 * after using *out. */
static int eval_str(const char *expr, ks_mempool *arena, ks_cel_value *out, char *err,
                    size_t errlen, ks_cel_program **prog)
{
    ks_cel_env env = {.cost_limit = KS_CEL_DRA_COST_LIMIT};
    ks_cel_error e;
    ks_cel_program *p = ks_cel_compile(expr, &env, &e);
    *prog = p;
    if (!p) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    int rc = ks_cel_eval(p, NULL, 0, arena, out, NULL, &e);
    if (rc)
        snprintf(err, errlen, "%s", e.msg);
    return rc;
}

static int run_cases(const char *lib, const cel_case *cases, size_t n)
{
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        const cel_case *c = &cases[i];
        ks_mempool arena = {0};
        ks_cel_value got, want;
        char err[400] = "", werr[400] = "";
        ks_cel_program *p1 = NULL, *p2 = NULL;
        int rc = eval_str(c->expr, &arena, &got, err, sizeof err, &p1);
        bool ok;
        if (c->want_err) {
            ok = rc != 0 && strstr(err, c->want_err) != NULL;
        } else {
            cr_assert_eq(eval_str(c->want, &arena, &want, werr, sizeof werr, &p2), 0,
                         "%s/%s: bad expectation %s: %s", lib, c->name, c->want, werr);
            ok = rc == 0 && same_kind_equal(&got, &want);
        }
        if (!ok) {
            failed++;
            cr_log_error("%s/%s: %s -> %s; want %s%s", lib, c->name, c->expr,
                         rc ? err : ks_cel_format(&arena, &got),
                         c->want_err ? "error containing " : "",
                         c->want_err ? c->want_err : c->want);
        }
        ks__mempool_free(&arena);
        ks_cel_program_free(p1);
        ks_cel_program_free(p2);
    }
    return failed;
}

#define RUN(lib, cases)                                                                            \
    cr_assert_eq(run_cases(lib, cases, sizeof cases / sizeof cases[0]), 0, "%s: failures above",   \
                 lib)

/* k8s.io/apiserver/pkg/cel/library/quantity_test.go TestQuantity */
static const cel_case quantity_cases[] = {
    {"parse", "quantity(\"12Mi\")", "quantity(\"12582912\")", NULL},
    {"parseInvalidSuffix", "quantity(\"10Mo\")", NULL,
     "quantities must match the regular expression"},
    {"parseInvalidSuffixPassesRegex", "quantity(\"10Mm\")", NULL,
     "unable to parse quantity's suffix"},
    {"isQuantity", "isQuantity(\"20\")", "true", NULL},
    {"isQuantity_megabytes", "isQuantity(\"20M\")", "true", NULL},
    {"isQuantity_mebibytes", "isQuantity(\"20Mi\")", "true", NULL},
    {"isQuantity_invalidSuffix", "isQuantity(\"20Mo\")", "false", NULL},
    {"isQuantity_passingRegex", "isQuantity(\"10Mm\")", "false", NULL},
    {"isQuantity_noOverload (checker: found no matching overload)", "isQuantity([1, 2, 3])", NULL,
     "no such overload"},
    {"equality_reflexivity", "quantity(\"200M\") == quantity(\"200M\")", "true", NULL},
    {"equality_symmetry",
     "quantity(\"200M\") == quantity(\"0.2G\") && quantity(\"0.2G\") == quantity(\"200M\")", "true",
     NULL},
    {"equality_transitivity",
     "quantity(\"2M\") == quantity(\"0.002G\") && quantity(\"2000k\") == quantity(\"2M\") && "
     "quantity(\"0.002G\") == "
     "quantity(\"2000k\")",
     "true", NULL},
    {"inequality", "quantity(\"200M\") == quantity(\"0.3G\")", "false", NULL},
    {"quantity_less", "quantity(\"50M\").isLessThan(quantity(\"50Mi\"))", "true", NULL},
    {"quantity_less_obvious", "quantity(\"50M\").isLessThan(quantity(\"100M\"))", "true", NULL},
    {"quantity_less_false", "quantity(\"100M\").isLessThan(quantity(\"50M\"))", "false", NULL},
    {"quantity_greater", "quantity(\"50Mi\").isGreaterThan(quantity(\"50M\"))", "true", NULL},
    {"quantity_greater_obvious", "quantity(\"150Mi\").isGreaterThan(quantity(\"100Mi\"))", "true",
     NULL},
    {"quantity_greater_false", "quantity(\"50M\").isGreaterThan(quantity(\"100M\"))", "false",
     NULL},
    {"compare_equal", "quantity(\"200M\").compareTo(quantity(\"0.2G\"))", "0", NULL},
    {"compare_less", "quantity(\"50M\").compareTo(quantity(\"50Mi\"))", "-1", NULL},
    {"compare_greater", "quantity(\"50Mi\").compareTo(quantity(\"50M\"))", "1", NULL},
    {"add_quantity", "quantity(\"50k\").add(quantity(\"20\")) == quantity(\"50.02k\")", "true",
     NULL},
    {"add_int", "quantity(\"50k\").add(20).isLessThan(quantity(\"50020\"))", "false", NULL},
    {"sub_quantity", "quantity(\"50k\").sub(quantity(\"20\")) == quantity(\"49.98k\")", "true",
     NULL},
    {"sub_int", "quantity(\"50k\").sub(20) == quantity(\"49980\")", "true", NULL},
    {"arith_chain_1", "quantity(\"50k\").add(20).sub(quantity(\"100k\")).asInteger()", "-49980",
     NULL},
    {"arith_chain", "quantity(\"50k\").add(20).sub(quantity(\"100k\")).sub(-50000).asInteger()",
     "20", NULL},
    {"as_integer", "quantity(\"50k\").asInteger()", "50000", NULL},
    {"as_integer_error", "quantity(\"9999999999999999999999999999999999999G\").asInteger()", NULL,
     "cannot convert value to integer"},
    {"is_integer", "quantity(\"9999999999999999999999999999999999999G\").isInteger()", "false",
     NULL},
    {"is_integer", "quantity(\"50\").isInteger()", "true", NULL},
    {"as_float", "quantity(\"50.703k\").asApproximateFloat()", "50703.0", NULL},
    {"add_does_not_mutate_receiver",
     "[quantity(\"9999999999999999999999999999999999999\")].all(x, "
     "x.add(quantity(\"1\")).compareTo(x.add(quantity(\"2\"))) == -1)",
     "true", NULL},
    /* beyond upstream's table: exactness where float64 or int64 would round */
    {"exact_beyond_float", "quantity(\"9007199254740993\") > quantity(\"9007199254740992\")", NULL,
     "no such overload"},
    {"exact_beyond_float_cmp",
     "quantity(\"9007199254740993\").isGreaterThan(quantity(\"9007199254740992\"))", "true", NULL},
    {"nano_round_up", "quantity(\"1.0000000001\") == quantity(\"1000000001n\")", "true", NULL},
    {"nano_round_up_negative", "quantity(\"-1.0000000001\") == quantity(\"-1000000001n\")", "true",
     NULL},
    {"binary_cap", "quantity(\"16Ei\").compareTo(quantity(\"9223372036854775807\"))", "0", NULL},
    /* upstream's AsInt64 follows the representation: a value parsed outside the int64 fast path
     * (an inf.Dec) or with a negative scale is never an integer, even when it is integral */
    {"dec_not_integer", "quantity(\"16Ei\").isInteger()", "false", NULL},
    {"negative_scale_not_integer", "quantity(\"1.5\").add(quantity(\"1.5\")).isInteger()", "false",
     NULL},
    {"scale_sum_integer", "quantity(\"1k\").add(quantity(\"500\")).asInteger()", "1500", NULL},
    {"sign", "[quantity(\"-1m\").sign(), quantity(\"0\").sign(), quantity(\"80Gi\").sign()]",
     "[-1, 0, 1]", NULL},
    {"gpu_80Gi", "quantity(\"80Gi\").compareTo(quantity(\"85899345920\"))", "0", NULL},
    {"negative_order",
     "[quantity(\"-2\").isLessThan(quantity(\"-1\")), "
     "quantity(\"-1Ki\").compareTo(quantity(\"-1k\")), "
     "quantity(\"-1\").isGreaterThan(quantity(\"-1.5\"))]",
     "[true, -1, true]", NULL},
    {"milli", "quantity(\"1500m\") == quantity(\"1.5\")", "true", NULL},
    {"exponent", "quantity(\"1e3\") == quantity(\"1k\")", "true", NULL},
};

Test(cel_libs, quantity) { RUN("quantity", quantity_cases); }

/* k8s.io/apiserver/pkg/cel/library/semver_test.go TestSemver */
static const cel_case semver_cases[] = {
    {"parse", "semver(\"1.2.3\")", "semver(\"1.2.3\")", NULL},
    {"parseInvalidVersion", "semver(\"v1.0\")", NULL, "No Major.Minor.Patch elements found"},
    {"isSemver", "isSemver(\"1.2.3-beta.1+build.1\")", "true", NULL},
    {"isSemver_empty_false", "isSemver(\"\")", "false", NULL},
    {"isSemver_v_prefix_false", "isSemver(\"v1.0.0\")", "false", NULL},
    {"isSemver_v_leading_whitespace_false", "isSemver(\" 1.0.0\")", "false", NULL},
    {"isSemver_v_contains_whitespace_false", "isSemver(\"1. 0.0\")", "false", NULL},
    {"isSemver_v_trailing_whitespace_false", "isSemver(\"1.0.0 \")", "false", NULL},
    {"isSemver_leading_zeros_false", "isSemver(\"01.01.01\")", "false", NULL},
    {"isSemver_major_only_false", "isSemver(\"1\")", "false", NULL},
    {"isSemver_major_minor_only_false", "isSemver(\"1.1\")", "false", NULL},
    {"isSemver_empty_normalize_false", "isSemver(\"\", true)", "false", NULL},
    {"isSemver_v_leading_whitespace_normalize_false", "isSemver(\" 1.0.0\", true)", "false", NULL},
    {"isSemver_v_contains_whitespace_normalize_false", "isSemver(\"1. 0.0\", true)", "false", NULL},
    {"isSemver_v_trailing_whitespace_normalize_false", "isSemver(\"1.0.0 \", true)", "false", NULL},
    {"isSemver_v_prefix_normalize_true", "isSemver(\"v1.0.0\", true)", "true", NULL},
    {"isSemver_leading_zeros_normalize_true", "isSemver(\"01.01.01\", true)", "true", NULL},
    {"isSemver_major_only_normalize_true", "isSemver(\"1\", true)", "true", NULL},
    {"isSemver_major_minor_only_normalize_true", "isSemver(\"1.1\", true)", "true", NULL},
    {"isSemver_noOverload (checker: found no matching overload)", "isSemver([1, 2, 3])", NULL,
     "no such overload"},
    {"equality_normalize", "semver(\"v01.01\", true) == semver(\"1.1.0\")", "true", NULL},
    {"equality_reflexivity", "semver(\"1.2.3\") == semver(\"1.2.3\")", "true", NULL},
    {"inequality", "semver(\"1.2.3\") == semver(\"1.0.0\")", "false", NULL},
    {"semver_less", "semver(\"1.0.0\").isLessThan(semver(\"1.2.3\"))", "true", NULL},
    {"semver_less_false", "semver(\"1.0.0\").isLessThan(semver(\"1.0.0\"))", "false", NULL},
    {"semver_greater", "semver(\"1.2.3\").isGreaterThan(semver(\"1.0.0\"))", "true", NULL},
    {"semver_greater_false", "semver(\"1.0.0\").isGreaterThan(semver(\"1.0.0\"))", "false", NULL},
    {"compare_equal", "semver(\"1.2.3\").compareTo(semver(\"1.2.3\"))", "0", NULL},
    {"compare_less", "semver(\"1.0.0\").compareTo(semver(\"1.2.3\"))", "-1", NULL},
    {"compare_greater", "semver(\"1.2.3\").compareTo(semver(\"1.0.0\"))", "1", NULL},
    {"major", "semver(\"1.2.3\").major()", "1", NULL},
    {"minor", "semver(\"1.2.3\").minor()", "2", NULL},
    {"patch", "semver(\"1.2.3\").patch()", "3", NULL},
    /* semver 2.0.0 precedence (blang/semver's Compare), beyond upstream's table */
    {"prerelease_lower", "semver(\"1.0.0-alpha\").isLessThan(semver(\"1.0.0\"))", "true", NULL},
    {"prerelease_order",
     "[\"1.0.0-alpha\", \"1.0.0-alpha.1\", \"1.0.0-alpha.beta\", \"1.0.0-beta\", \"1.0.0-beta.2\", "
     "\"1.0.0-beta.11\", \"1.0.0-rc.1\", \"1.0.0\"].map(v, semver(v)).isSorted()",
     NULL, "no such overload"},
    {"prerelease_chain",
     "semver(\"1.0.0-alpha\") .isLessThan(semver(\"1.0.0-alpha.1\")) && "
     "semver(\"1.0.0-alpha.1\").isLessThan(semver(\"1.0.0-alpha.beta\")) && "
     "semver(\"1.0.0-alpha.beta\").isLessThan(semver(\"1.0.0-beta\")) && "
     "semver(\"1.0.0-beta.2\").isLessThan(semver(\"1.0.0-beta.11\")) && "
     "semver(\"1.0.0-beta.11\").isLessThan(semver(\"1.0.0-rc.1\")) && "
     "semver(\"1.0.0-rc.1\").isLessThan(semver(\"1.0.0\"))",
     "true", NULL},
    {"prerelease_prefix",
     "semver(\"1.0.0-a\").isLessThan(semver(\"1.0.0-ab\")) && "
     "semver(\"1.0.0-ab\").isGreaterThan(semver(\"1.0.0-a\"))",
     "true", NULL},
    {"build_ignored", "semver(\"1.0.0+a\") == semver(\"1.0.0+b\")", "true", NULL},
    {"leading_zero_prerelease", "isSemver(\"1.0.0-01\")", "false", NULL},
    {"short_with_meta", "semver(\"1.1-rc\", true)", NULL,
     "short version cannot contain PreRelease/Build meta data"},
};

Test(cel_libs, semver) { RUN("semver", semver_cases); }

/* k8s.io/apiserver/pkg/cel/library/lists.go (ListsVersion 1) documented examples */
static const cel_case lists_cases[] = {
    {"isSorted_int", "[1, 2, 3].isSorted()", "true", NULL},
    {"isSorted_string", "['a', 'b', 'b', 'c'].isSorted()", "true", NULL},
    {"isSorted_double", "[2.0, 1.0].isSorted()", "false", NULL},
    {"isSorted_one", "[1].isSorted()", "true", NULL},
    {"isSorted_empty", "[].isSorted()", "true", NULL},
    {"sum_int", "[1, 3].sum()", "4", NULL},
    {"sum_double", "[1.0, 3.0].sum()", "4.0", NULL},
    {"sum_empty", "[].sum()", "0", NULL},
    {"sum_overflow", "[9223372036854775807, 1].sum()", NULL, "integer overflow"},
    {"min", "[1, 3].min()", "1", NULL},
    {"max", "[1, 3].max()", "3", NULL},
    {"min_empty", "[].min()", NULL, "min called on empty list"},
    {"max_empty", "[].max()", NULL, "max called on empty list"},
    {"min_one", "[1].min()", "1", NULL},
    {"min_concat", "([0] + []).min()", "0", NULL},
    {"indexOf", "[1, 2, 2, 3].indexOf(2)", "1", NULL},
    {"lastIndexOf", "['a', 'b', 'b', 'c'].lastIndexOf('b')", "2", NULL},
    {"indexOf_missing", "[1.0].indexOf(1.1)", "-1", NULL},
    {"indexOf_empty", "[].indexOf('string')", "-1", NULL},
    {"includes_list", "[1, 2, 3].includes(2)", "true", NULL},
    {"includes_list_false", "[1, 2, 3].includes(4)", "false", NULL},
    {"includes_scalar", "'model-a'.includes('model-a')", "true", NULL},
    {"includes_scalar_false", "'model-a'.includes('model-b')", "false", NULL},
    /* cel-go ext.Lists (v3) */
    {"distinct", "[1, 2, 2, 1.0, 'a', 'a'].distinct()", "[1, 2, 'a']", NULL},
    {"flatten", "[1, [2, [3]]].flatten()", "[1, 2, [3]]", NULL},
    {"flatten_depth", "[1, [2, [3]]].flatten(2)", "[1, 2, 3]", NULL},
    {"slice", "[1, 2, 3, 4].slice(1, 3)", "[2, 3]", NULL},
    {"sort", "[3, 1, 2].sort()", "[1, 2, 3]", NULL},
    {"reverse", "[1, 2, 3].reverse()", "[3, 2, 1]", NULL},
    {"range", "lists.range(3)", "[0, 1, 2]", NULL},
    {"first", "[1, 2].first()", "optional.of(1)", NULL},
    {"last_empty", "[].last()", "optional.none()", NULL},
};

Test(cel_libs, lists) { RUN("lists", lists_cases); }

/* cel-go v0.29.2 ext/sets_test.go */
static const cel_case sets_cases[] = {
    {"contains_empty", "sets.contains([], [])", "true", NULL},
    {"contains_empty_rhs", "sets.contains([1], [])", "true", NULL},
    {"contains_one", "sets.contains([1], [1])", "true", NULL},
    {"contains_dup_rhs", "sets.contains([1], [1, 1])", "true", NULL},
    {"contains_dup_lhs", "sets.contains([1, 1], [1])", "true", NULL},
    {"contains_unordered", "sets.contains([2, 1], [1])", "true", NULL},
    {"contains_subset", "sets.contains([1, 2, 3, 4], [2, 3])", "true", NULL},
    {"contains_mixed_num", "sets.contains([1], [1.0, 1])", "true", NULL},
    {"contains_mixed_num2", "sets.contains([1, 2], [2u, 2.0])", "true", NULL},
    {"contains_mixed_num3", "sets.contains([1, 2u], [2, 2.0])", "true", NULL},
    {"contains_mixed_num4", "sets.contains([1, 2.0, 3u], [1.0, 2u, 3])", "true", NULL},
    {"contains_nested", "sets.contains([[1], [2, 3]], [[2, 3.0]])", "true", NULL},
    {"not_contains", "!sets.contains([1], [2])", "true", NULL},
    {"not_contains_superset", "!sets.contains([1], [1, 2])", "true", NULL},
    {"not_contains_string", "!sets.contains([1], [\"1\", 1])", "true", NULL},
    {"not_contains_fraction", "!sets.contains([1], [1.1, 1u])", "true", NULL},
    {"equivalent_empty", "sets.equivalent([], [])", "true", NULL},
    {"equivalent_one", "sets.equivalent([1], [1])", "true", NULL},
    {"equivalent_dup_rhs", "sets.equivalent([1], [1, 1])", "true", NULL},
    {"equivalent_dup_lhs", "sets.equivalent([1, 1], [1])", "true", NULL},
    {"equivalent_mixed", "sets.equivalent([1], [1u, 1.0])", "true", NULL},
    {"equivalent_unordered", "sets.equivalent([1, 2, 3], [3u, 2.0, 1])", "true", NULL},
    {"equivalent_nested", "sets.equivalent([[1.0], [2, 3]], [[1], [2, 3.0]])", "true", NULL},
    {"not_equivalent", "!sets.equivalent([2, 1], [1])", "true", NULL},
    {"not_equivalent_superset", "!sets.equivalent([1], [1, 2])", "true", NULL},
    {"not_equivalent_dups", "!sets.equivalent([1, 2], [2u, 2, 2.0])", "true", NULL},
    {"intersects", "sets.intersects([1], [1])", "true", NULL},
    {"intersects_mixed", "sets.intersects([1], [1.0, 2])", "true", NULL},
    {"intersects_nested", "sets.intersects([[1], [2, 3]], [[1, 2], [2, 3.0]])", "true", NULL},
    {"not_intersects_empty", "!sets.intersects([], [])", "true", NULL},
    {"not_intersects_empty_rhs", "!sets.intersects([1], [])", "true", NULL},
    {"not_intersects", "!sets.intersects([1], [2])", "true", NULL},
    {"not_intersects_string", "!sets.intersects([1], [\"1\", 2])", "true", NULL},
    {"not_intersects_fraction", "!sets.intersects([1], [1.1, 2u])", "true", NULL},
};

Test(cel_libs, sets) { RUN("sets", sets_cases); }

/* k8s.io/apiserver/pkg/cel/library/regex.go, and matches() with RE2 syntax: values as Go's regexp
 * gives them (FindString/FindAllString: leftmost-first, empty matches after a match skipped). */
static const cel_case regex_cases[] = {
    {"find_digits", "\"abc 123\".find('[0-9]+')", "'123'", NULL},
    {"find_empty_match", "\"abc 123\".find('[0-9]*')", "''", NULL},
    {"find_none", "\"abc 123\".find('xyz')", "''", NULL},
    {"findAll", "\"123 abc 456\".findAll('[0-9]+')", "['123', '456']", NULL},
    {"findAll_star", "\"123 abc 456\".findAll('[0-9]*')", "['123', '', '', '', '', '456']", NULL},
    {"findAll_limit", "\"123 abc 456\".findAll('[0-9]*', 1)", "['123']", NULL},
    {"findAll_none", "\"123 abc 456\".findAll('xyz')", "[]", NULL},
    {"matches_unanchored", "'gpu-a100'.matches('a1')", "true", NULL},
    {"matches_anchored", "'gpu-a100'.matches('^gpu-[a-z][0-9]+$')", "true", NULL},
    {"matches_global", "matches('gpu-a100', '^gpu')", "true", NULL},
    {"dollar_is_end_only", "'a\\n'.matches('a$')", "false", NULL},
    {"multiline_dollar", "'a\\nb'.matches('(?m)a$')", "true", NULL},
    {"dot_no_newline", "'a\\nb'.matches('a.b')", "false", NULL},
    {"dot_s_flag", "'a\\nb'.matches('(?s)a.b')", "true", NULL},
    {"case_flag", "'GPU'.matches('(?i)gpu')", "true", NULL},
    {"named_group", "'v1'.matches('(?P<major>v[0-9])')", "true", NULL},
    {"unicode_class", "'é'.matches('^\\\\pL$')", "true", NULL},
    {"ascii_word", "'é'.matches('^\\\\w$')", "false", NULL},
    {"vertical_tab_is_char", "'\\v'.matches('^\\\\v$')", "true", NULL},
    {"vertical_tab_not_space", "'\\v'.matches('\\\\s')", "false", NULL},
    {"newline_not_v", "'\\n'.matches('\\\\v')", "false", NULL},
    {"backreference_rejected", "'aa'.matches('(a)\\\\1')", NULL, "invalid escape sequence"},
    {"lookahead_rejected", "'ab'.matches('a(?=b)')", NULL, "invalid or unsupported Perl syntax"},
    {"lookbehind_rejected", "'ab'.matches('(?<=a)b')", NULL, "invalid named capture: `(?<=a)b`"},
    {"comment_rejected", "'ab'.matches('(?#c)ab')", NULL,
     "invalid or unsupported Perl syntax: `(?#`"},
    {"Z_rejected", "'ab'.matches('ab\\\\Z')", NULL, "invalid escape sequence: `\\Z`"},
    {"atomic_rejected", "'ab'.matches('(?>a)b')", NULL, "invalid or unsupported Perl syntax"},
    {"possessive_rejected", "'aa'.matches('a*+')", NULL, "invalid nested repetition operator"},
    {"repeat_limit", "'a'.matches('a{1001}')", NULL, "invalid repeat count"},
    {"repeat_1000_ok", "'a'.matches('a{0,1000}')", "true", NULL},
    {"bad_pattern_runtime", "'a'.matches(['('][0])", NULL, "error parsing regexp"},
    {"octal_escape", "'\\n'.matches('\\\\012')", "true", NULL},
};

Test(cel_libs, regex) { RUN("regex", regex_cases); }

/* cel-go ext strings (v2) and the standard string functions DRA selectors use */
static const cel_case strings_cases[] = {
    {"lowerAscii", "'TacoCÆt Xii'.lowerAscii()", "'tacocÆt xii'", NULL},
    {"upperAscii", "'tacoCat xii'.upperAscii()", "'TACOCAT XII'", NULL},
    {"startsWith", "'nvidia.com/gpu'.startsWith('nvidia.com')", "true", NULL},
    {"endsWith", "'nvidia.com/gpu'.endsWith('/gpu')", "true", NULL},
    {"contains", "'a100-80gb'.contains('80gb')", "true", NULL},
    {"split", "'a,b,c'.split(',')", "['a', 'b', 'c']", NULL},
    {"split_limit", "'a,b,c'.split(',', 2)", "['a', 'b,c']", NULL},
    {"split_empty_sep", "'héllo'.split('')", "['h', 'é', 'l', 'l', 'o']", NULL},
    {"join", "['a', 'b'].join('-')", "'a-b'", NULL},
    {"replace", "'a.b.c'.replace('.', '/')", "'a/b/c'", NULL},
    {"replace_limit", "'a.b.c'.replace('.', '/', 1)", "'a/b.c'", NULL},
    {"trim", "'  \\t x y \\n'.trim()", "'x y'", NULL},
    {"indexOf", "'tacocat'.indexOf('co')", "2", NULL},
    {"indexOf_unicode", "'ta©o©αT'.indexOf('©')", "2", NULL},
    {"lastIndexOf", "'tacocat'.lastIndexOf('at')", "5", NULL},
    {"substring", "'tacocat'.substring(4)", "'cat'", NULL},
    {"substring_range", "'tacocat'.substring(0, 4)", "'taco'", NULL},
    {"substring_bad", "'tacocat'.substring(-1)", NULL, "index out of range: -1"},
    {"charAt", "'tacocat'.charAt(3)", "'o'", NULL},
    {"charAt_end", "'tacocat'.charAt(7)", "''", NULL},
    {"reverse", "'gums'.reverse()", "'smug'", NULL},
    {"quote", "strings.quote('a\"b\\n')", "'\"a\\\\\"b\\\\n\"'", NULL},
    /* string(double) is Go's %g (strconv.FormatFloat 'g', -1): checked against cel-go */
    {"string_double_exp",
     "[string(1000000.0), string(123456789.0), string(1e20), string(100.0), "
     "string(0.0001), string(1.5e-7), string(-0.0), string(1.0/3.0)]",
     "['1e+06', '1.23456789e+08', '1e+20', '100', '0.0001', '1.5e-07', '-0', '0.3333333333333333']",
     NULL},
    /* format() as Kubernetes runs it (values checked against tests/tools/cel-oracle) */
    {"format_fixed", "\"%.3f|%f|%.0f\".format([1234.5678, -0.5, 2.5])", "'1,234.568|-0.500000|2'",
     NULL},
    {"format_scientific",
     "\"%e|%.3e|%e\".format([1052.032911275, 0.000123, double(\"-Infinity\")])",
     "'1.052033×10⁰³|1.230000×10⁻⁰⁴|    -∞'", NULL},
    {"format_aggregates",
     "\"%s %s\".format([[1, 1.5, \"a\", b\"x\", null, true], {\"b\": 1, \"a\": 2.5}])",
     "'[1, 1.500000, \"a\", b\"x\", null, true] {\"a\":2.500000, \"b\":1}'", NULL},
    {"format_ints", "\"%d %x %X %o %b %b %%\".format([-7, 255, -30, -9, 5, true])",
     "'-7 ff -1E -11 101 1 %'", NULL},
    {"format_decimal_double", "\"%d\".format([1.5])", NULL,
     "error during formatting: decimal clause can only be used on integers, was given double"},
    {"format_out_of_range", "\"%s %s\".format([1])", NULL, "index 1 out of range"},
    {"size_codepoints", "size('αβγ')", "3", NULL},
};

Test(cel_libs, strings) { RUN("strings", strings_cases); }

/* quantity() and semver() on literals are parsed once, when the expression is compiled, not at
 * every evaluation (a DRA selector runs for every device): two evaluations in two arenas return
 * the same parsed value. Results, errors and costs are those of the runtime path (the costs here
 * were recorded with the evaluator that parsed at every call). */
static const struct {
    const char *expr;
    int rc;
    uint64_t cost;
    const char *err; /* substring, or NULL */
} literal_calls[] = {
    {"quantity(\"40Gi\")", 0, 1, NULL},
    {"quantity(\"40Gi\").isGreaterThan(quantity(\"1Mi\"))", 0, 3, NULL},
    {"quantity(\"123456789012345678901234567890Gi\").compareTo(quantity(\"1\"))", 0, 6, NULL},
    {"semver(\"1.2.3\").major()", 0, 2, NULL},
    {"semver(\"v1.2\", true).minor()", 0, 2, NULL},
    {"semver(\"1.2.3\") == semver(\"1.2.3\")", 0, 3, NULL},
    {"[1,2,3].all(x, quantity(\"1k\").isLessThan(quantity(\"2k\")))", 0, 19, NULL},
    {"quantity(dyn(\"5\")).asInteger()", 0, 2, NULL},
    {"isQuantity(\"1Gi\")", 0, 1, NULL},
    {"quantity(\"10Mo\")", -1, 1, "quantities must match the regular expression"},
    {"semver(\"x\")", -1, 1, "No Major.Minor.Patch elements found"},
};

Test(cel_libs, literal_quantity_semver_parsed_once)
{
    for (size_t i = 0; i < sizeof literal_calls / sizeof literal_calls[0]; i++) {
        ks_cel_env env = {.cost_limit = KS_CEL_DRA_COST_LIMIT};
        ks_cel_error e;
        ks_cel_program *p = ks_cel_compile(literal_calls[i].expr, &env, &e);
        cr_assert(p, "%s: %s", literal_calls[i].expr, e.msg);
        ks_mempool a1 = {0}, a2 = {0};
        ks_cel_value v1, v2;
        uint64_t c1 = 0, c2 = 0;
        int rc1 = ks_cel_eval(p, NULL, 0, &a1, &v1, &c1, &e);
        if (literal_calls[i].err)
            cr_expect(strstr(e.msg, literal_calls[i].err), "%s: %s", literal_calls[i].expr, e.msg);
        int rc2 = ks_cel_eval(p, NULL, 0, &a2, &v2, &c2, &e);
        cr_expect_eq(rc1, literal_calls[i].rc, "%s", literal_calls[i].expr);
        cr_expect_eq(rc2, rc1, "%s", literal_calls[i].expr);
        cr_expect_eq(c1, literal_calls[i].cost, "%s: cost %llu", literal_calls[i].expr,
                     (unsigned long long)c1);
        cr_expect_eq(c2, c1, "%s", literal_calls[i].expr);
        if (rc1 == 0 && v1.kind == KS_CEL_QUANTITY)
            cr_expect_eq(v1.q, v2.q, "%s: parsed at each evaluation", literal_calls[i].expr);
        if (rc1 == 0 && v1.kind == KS_CEL_SEMVER)
            cr_expect_eq(v1.sv, v2.sv, "%s: parsed at each evaluation", literal_calls[i].expr);
        ks__mempool_free(&a1);
        ks__mempool_free(&a2);
        ks_cel_program_free(p);
    }
}
