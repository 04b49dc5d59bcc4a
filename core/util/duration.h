/*
 * Go durations, as the configuration file, the --leader-elect-* flags and validate-config's output
 * write them: "1m30s", "500ms", "10s".
 *
 * Threads: any; pure.
 */
#ifndef KS_CORE_DURATION_H
#define KS_CORE_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Go's time.ParseDuration, in nanoseconds into *ns. 0 on success, -1 when s is not a duration
 * (then *ns is untouched). */
int ks__duration_parse(const char *s, int64_t *ns);

/* Go's time.Duration.String() of ns into buf ("1m30s", "100ms", "0s"); cut to len. */
void ks__duration_format(int64_t ns, char *buf, size_t len);

#endif
