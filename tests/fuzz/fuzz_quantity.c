/*
 * ks__quantity_parse (core/api/quantity.h) on arbitrary text.
 *
 * Invariant asserted (the project has no quantity formatter, so the harness writes the canonical
 * form itself): Value() and MilliValue() are both the exact quantity rounded away from zero, at
 * scale 0 and 3. Hence, whenever MilliValue() did not saturate,
 *   - Value() == ceil_away(MilliValue() / 1000) (nested ceilings: ceil(ceil(1000x)/1000) ==
 * ceil(x));
 *   - the canonical form "<MilliValue()>m" parses back to the same MilliValue() and Value();
 * and in every case Value() and MilliValue() have the same sign, and parsing is deterministic.
 */
#include "fuzz_common.h"

#include <inttypes.h>

#include "api/quantity.h"

static int64_t ceil_div1000_away(int64_t milli)
{
    int64_t q = milli / 1000, r = milli % 1000; /* C truncates toward zero */
    return r == 0 ? q : (milli > 0 ? q + 1 : q - 1);
}

static int sign(int64_t v) { return (v > 0) - (v < 0); }

static void check(int ok, const char *what, const char *s, int64_t value, int64_t milli)
{
    if (ok)
        return;
    fprintf(stderr, "fuzz_quantity: %s: \"%s\" -> value %" PRId64 ", milli %" PRId64 "\n", what, s,
            value, milli);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fz_cstr(data, size), canon[32];
    int64_t value = 0, milli = 0, v2 = 0, m2 = 0;
    if (!s)
        return 0;
    if (ks__quantity_parse(s, &value, &milli) == 0) {
        check(sign(value) == sign(milli), "value and milli differ in sign", s, value, milli);
        check(ks__quantity_parse(s, &v2, &m2) == 0 && v2 == value && m2 == milli,
              "a second parse differs", s, value, milli);
        if (milli != INT64_MAX && milli != INT64_MIN) {
            check(value == ceil_div1000_away(milli), "value != ceil(milli/1000)", s, value, milli);
            snprintf(canon, sizeof(canon), "%" PRId64 "m", milli);
            check(ks__quantity_parse(canon, &v2, &m2) == 0 && v2 == value && m2 == milli,
                  "the canonical form parses to another value", s, value, milli);
        }
    }
    free(s);
    return 0;
}
