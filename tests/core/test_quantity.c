/*
 * resource.Quantity parsing (core/api/quantity.c): every suffix, decimal exponents, fractions, the
 * rounding up of Value() / MilliValue(), saturation, and the strings upstream rejects. Cases follow
 * apimachinery's quantity_test.go (TestQuantityParse, TestQuantityRoundUp and the invalid list),
 * read as the two integers the scheduler uses.
 */
#include <criterion/criterion.h>

#include <stdint.h>

#include "kubesched/plugin.h"
#include "api/quantity.h"

/* Parses s and checks Value() and MilliValue(). */
static void expect_q(const char *s, int64_t value, int64_t milli)
{
    int64_t v = 12345, m = 12345;
    int rc = ks__quantity_parse(s, &v, &m);
    cr_assert_eq(rc, 0, "\"%s\": unexpected error %d", s, rc);
    cr_expect_eq(v, value, "\"%s\": Value() = %lld, want %lld", s, (long long)v, (long long)value);
    cr_expect_eq(m, milli, "\"%s\": MilliValue() = %lld, want %lld", s, (long long)m,
                 (long long)milli);
}

static void expect_invalid(const char *s)
{
    int64_t v = 777, m = 888;
    int rc = ks__quantity_parse(s, &v, &m);
    cr_expect_eq(rc, KS_EPARSE, "\"%s\" parsed unexpectedly (value %lld)", s, (long long)v);
    cr_expect(v == 777 && m == 888, "\"%s\": outputs written on error", s);
}

#define KI 1024LL
#define MI (KI * KI)
#define GI (MI * KI)
#define TI (GI * KI)
#define PI (TI * KI)
#define EI (PI * KI)

Test(quantity, parses_zero_with_every_suffix)
{
    const char *zeros[] = {"0",   "0n",   "0u",  "0m",  "0k",  "0M",  "0G",  "0T",
                           "0P",  "0E",   "0Ki", "0Mi", "0Gi", "0Ti", "0Pi", "0Ei",
                           "0e3", "0E-3", "0.0", "00",  "-0",  "+0"};
    for (size_t i = 0; i < sizeof(zeros) / sizeof(zeros[0]); i++)
        expect_q(zeros[i], 0, 0);
}

Test(quantity, parses_plain_integers)
{
    expect_q("1", 1, 1000);
    expect_q("9", 9, 9000);
    expect_q("4000", 4000, 4000000); /* a bare cpu "4000" is 4000 cores */
    expect_q("007", 7, 7000);
}

Test(quantity, parses_binary_suffixes)
{
    expect_q("1Ki", KI, KI * 1000);
    expect_q("8Ki", 8 * KI, 8 * KI * 1000);
    expect_q("7Mi", 7 * MI, 7 * MI * 1000);
    expect_q("200Mi", 209715200, 209715200000LL);
    expect_q("6Gi", 6 * GI, 6 * GI * 1000);
    expect_q("5Ti", 5 * TI, 5 * TI * 1000);
    expect_q("100Ti", 100 * TI, 100 * TI * 1000);
    expect_q("4Pi", 4 * PI, 4 * PI * 1000);
    expect_q("3Ei", 3 * EI, INT64_MAX); /* milli saturates */
}

Test(quantity, parses_decimal_suffixes)
{
    expect_q("5n", 1, 1);
    expect_q("4u", 1, 1);
    expect_q("3m", 1, 3);
    expect_q("100m", 1, 100);
    expect_q("8k", 8000, 8000000);
    expect_q("50k", 50000, 50000000);
    expect_q("7M", 7000000, 7000000000LL);
    expect_q("6G", 6000000000LL, 6000000000000LL);
    expect_q("5T", 5000000000000LL, 5000000000000000LL);
    expect_q("40T", 40000000000000LL, 40000000000000000LL);
    expect_q("2P", 2000000000000000LL, 2000000000000000000LL);
    expect_q("1E", 1000000000000000000LL, INT64_MAX);
}

Test(quantity, suffix_case_matters)
{
    /* m is milli and M mega; k only lower case; Ki only with a capital K. */
    expect_q("1m", 1, 1);
    expect_q("1M", 1000000, 1000000000);
    expect_invalid("1K");
    expect_invalid("1ki");
    expect_invalid("1KI");
    expect_invalid("1mi");
    expect_invalid("1g");
}

Test(quantity, parses_decimal_exponents)
{
    expect_q("1E-3", 1, 1);
    expect_q("5E-3", 1, 5);
    expect_q("1e3", 1000, 1000000);
    expect_q("1E6", 1000000, 1000000000);
    expect_q("1e9", 1000000000, 1000000000000LL);
    expect_q("1E12", 1000000000000LL, 1000000000000000LL);
    expect_q("1e13", 10000000000000LL, 10000000000000000LL);
    expect_q("1e15", 1000000000000000LL, 1000000000000000000LL);
    expect_q("1E18", 1000000000000000000LL, INT64_MAX);
    expect_q("1.2e3", 1200, 1200000);
    expect_q("1.3E+6", 1300000, 1300000000);
    expect_q("1.40e9", 1400000000, 1400000000000LL);
    expect_q("1.53E12", 1530000000000LL, 1530000000000000LL);
    expect_q("0.5e0", 1, 500);
    expect_q("0.5e-1", 1, 50);
    expect_q("0.5e-2", 1, 5);
    expect_q("1e+3", 1000, 1000000);
    expect_q("1e03", 1000, 1000000);
}

Test(quantity, parses_fractions_with_suffixes)
{
    expect_q("100.035k", 100035, 100035000);
    expect_q("10.035M", 10035000, 10035000000LL);
    expect_q("9.01", 10, 9010);
    expect_q("8.1k", 8100, 8100000);
    expect_q("7.123456M", 7123456, 7123456000LL);
    expect_q("6.987654321G", 6987654321LL, 6987654321000LL);
    expect_q("5.444T", 5444000000000LL, 5444000000000000LL);
    expect_q("2.5P", 2500000000000000LL, 2500000000000000000LL);
    expect_q("1.01E", 1010000000000000000LL, INT64_MAX);
    expect_q("0.001", 1, 1);
    expect_q("0.0005k", 1, 500);
    expect_q("0.00050k", 1, 500);
    expect_q("0.05000", 1, 50);
    expect_q("0.1", 1, 100);
    expect_q("1.5", 2, 1500);
}

Test(quantity, parses_fractional_binary_quantities)
{
    expect_q("0.5Ki", 512, 512000);
    expect_q("0.5Mi", 524288, 524288000);
    expect_q("1.5Gi", 1610612736, 1610612736000LL);
    /* 100.035Ki = 102435.84 */
    expect_q("100.035Ki", 102436, 102435840);
    /* 0.05Gi = 53687091.2 */
    expect_q("0.05Gi", 53687092, 53687091200LL);
    /* 0.025Ti = 27487790694.4 */
    expect_q("0.025Ti", 27487790695LL, 27487790694400LL);
}

Test(quantity, does_not_saturate_long_binary_fractions)
{
    /* mant * 2^k passes int64 before the fraction is divided out; the value itself fits. */
    expect_q("1.2345678901Gi", 1325607179LL, 1325607178168LL);
    expect_q("1.23456789Ti", 1357421750334LL, 1357421750333882LL);
    expect_q("1.5Ei", 1729382256910270464LL, INT64_MAX);
    expect_q("0.0000000000000000000001Ei", 1, 1);
    expect_q("1.0000000000000000001Ki", 1025, 1024001);
}

Test(quantity, rounds_up_sub_milli_cpu)
{
    expect_q("0.0001", 1, 1);
    expect_q("0.1m", 1, 1);
    expect_q("1.1m", 1, 2);
    expect_q("999999n", 1, 1);
    expect_q("1000001n", 1, 2);
    expect_q("1500u", 1, 2);
    expect_q("250m", 1, 250);
}

Test(quantity, rounds_values_finer_than_a_nano_up)
{
    /* Upstream rounds below-nano amounts up to 1n at parse time; the integers are ceilings. */
    expect_q("3.001n", 1, 1);
    expect_q("1.1E-9", 1, 1);
    expect_q("0.0000000001", 1, 1);
    expect_q("0.0000000005", 1, 1);
    expect_q("0.5e-9", 1, 1);
    expect_q("0.9n", 1, 1);
    expect_q("0.00000012345", 1, 1);
    expect_q("0.000000000001Ki", 1, 1);
    expect_q("1e-30", 1, 1);
}

Test(quantity, accepts_forms_without_leading_or_trailing_digits)
{
    expect_q(".001", 1, 1);
    expect_q(".0001k", 1, 100);
    expect_q(".5", 1, 500);
    expect_q("1.", 1, 1000);
    expect_q("1.G", 1000000000, 1000000000000LL);
}

Test(quantity, accepts_an_explicit_sign)
{
    expect_q("+1", 1, 1000);
    expect_q("+100m", 1, 100);
    expect_q("+1Ki", KI, KI * 1000);
    expect_q("-1", -1, -1000);
    expect_q("-1Ki", -KI, -KI * 1000);
}

Test(quantity, rounds_negative_values_away_from_zero)
{
    expect_q("-1.5", -2, -1500);
    expect_q("-100m", -1, -100);
    expect_q("-9.01", -10, -9010);
    expect_q("-0.0001", -1, -1);
}

Test(quantity, reads_a_missing_number_as_zero)
{
    /* Upstream's scanner turns an empty numerator into "0": these are valid zero quantities. */
    const char *zeros[] = {".", "-.", "+", "-", "m", "Ki", "e3", ".E-3"};
    for (size_t i = 0; i < sizeof(zeros) / sizeof(zeros[0]); i++)
        expect_q(zeros[i], 0, 0);
}

Test(quantity, saturates_beyond_int64)
{
    expect_q("9223372036854775807", INT64_MAX, INT64_MAX);
    expect_q("9223372036854775808", INT64_MAX, INT64_MAX);
    expect_q("9223372036854775", 9223372036854775LL, 9223372036854775000LL);
    expect_q("9223372036854776", 9223372036854776LL, INT64_MAX);
    expect_q("12E", INT64_MAX, INT64_MAX);
    expect_q("9Ei", INT64_MAX, INT64_MAX);
    expect_q("8Ei", INT64_MAX, INT64_MAX); /* 2^63 */
    expect_q("7.99Ei", 9211842821808707339LL, INT64_MAX);
    expect_q("9223372036854775807Ki", INT64_MAX, INT64_MAX);
    expect_q("1e100", INT64_MAX, INT64_MAX);
    expect_q("-12E", INT64_MIN, INT64_MIN);
}

Test(quantity, keeps_precision_with_many_digits)
{
    /* More digits than fit a machine word: nothing may be dropped silently. */
    expect_q("0.000000000000000000000000000000000000000000000001", 1, 1);
    expect_q("1234567890123456789012345678901234567890", INT64_MAX, INT64_MAX);
    expect_q("0.1000000000000000000000000000000000000001", 1, 101);
    expect_q("1000000000000000000000000000000000000000e-39", 1, 1000);
    expect_q("1000000000000000000000000000000000000001e-39", 2, 1001);
}

Test(quantity, accepts_exponents_within_int32)
{
    expect_q("1e2147483647", INT64_MAX, INT64_MAX);
    expect_q("1e-2147483647", 1, 1);
    expect_q("0e2147483647", 0, 0);
    expect_invalid("1e2147483648");
    expect_invalid("1e-2147483648");
    expect_invalid("1e4294967297"); /* would truncate to 1e1 with a 32-bit cast */
    expect_invalid("1e9223372036854775808");
}

Test(quantity, rejects_malformed_strings)
{
    const char *bad[] = {
        "",        "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i",  "1i",     "-3.01i",
        "-3.01e-", " 1",    "1 ",     "1\t",   "1e",    "1e+",  "1E-",  "e",      "1e3.5",
        "1MM",     "1Kii",  "1Ki5",   "1ke3",  "1k3",   "--1",  "+-1",  "1-",     "1.5.",
        "0x10",    "1,5",   "1_000",  "i",     "1Ki ",  "one",  "1e3e", "1.0e1G",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_invalid(bad[i]);
    cr_expect_eq(ks__quantity_parse(NULL, NULL, NULL), KS_EPARSE);
}

Test(quantity, allows_null_outputs)
{
    int64_t v = 0, m = 0;
    cr_expect_eq(ks__quantity_parse("2", NULL, NULL), 0);
    cr_expect_eq(ks__quantity_parse("2", &v, NULL), 0);
    cr_expect_eq(v, 2);
    cr_expect_eq(ks__quantity_parse("2", NULL, &m), 0);
    cr_expect_eq(m, 2000);
}
