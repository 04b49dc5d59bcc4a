/*
 * Kubernetes resource.Quantity parsing, exactly as apimachinery: "[+-]number suffix" with binary
 * (Ki..Ei), decimal (n u m "" k M G T P E) or exponent (e/E) suffixes, rounded up at nano
 * precision, then read as Value() (ceil to units) or MilliValue() (ceil to thousandths).
 */
#ifndef KS_CORE_QUANTITY_H
#define KS_CORE_QUANTITY_H

#include <stdint.h>

/* Parses s. On success returns 0 and writes Value() to *value and MilliValue() to *milli (either
 * may be NULL); values beyond int64 saturate at INT64_MAX/INT64_MIN, as upstream's Value() does.
 * On a malformed quantity returns KS_EPARSE and writes nothing. */
int ks__quantity_parse(const char *s, int64_t *value, int64_t *milli);

#endif
