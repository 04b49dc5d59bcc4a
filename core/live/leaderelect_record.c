/*
 * The pure half of leader election (leaderelect.h): the Lease record and its JSON, the decision
 * of one try, the release record, the health check, the identity and the --leader-elect* flags.
 * Nothing here touches the network or a clock of its own, so the unit tests drive it directly.
 */
#include "live/leaderelect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "util/duration.h"

/* --- the record ------------------------------------------------------------------------------ */

void ks__lease_microtime(int64_t unix_ns, char *buf, size_t len)
{
    time_t sec = (time_t)(unix_ns / 1000000000);
    long usec = (long)((unix_ns % 1000000000) / 1000);
    if (usec < 0) {
        usec += 1000000;
        sec--;
    }
    struct tm tm;
    gmtime_r(&sec, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    if (n > 0 && n < len)
        snprintf(buf + n, len - n, ".%06ldZ", usec);
}

static int copy_str(char *dst, size_t cap, const cJSON *v, const char *field, char *err,
                    size_t errlen)
{
    dst[0] = '\0';
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v)) {
        snprintf(err, errlen, "Lease spec.%s is not a string", field);
        return KS_EINVAL;
    }
    if (strlen(v->valuestring) >= cap) {
        snprintf(err, errlen, "Lease spec.%s is longer than %zu bytes", field, cap - 1);
        return KS_EINVAL;
    }
    memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
    return 0;
}

static int copy_int(int *dst, const cJSON *v, const char *field, char *err, size_t errlen)
{
    *dst = 0;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < -2147483648.0 || v->valuedouble > 2147483647.0) {
        snprintf(err, errlen, "Lease spec.%s is not a 32-bit integer", field);
        return KS_EINVAL;
    }
    *dst = (int)v->valuedouble;
    return 0;
}

int ks__lease_decode(const cJSON *lease, ks_lease_record *rec, char *rv, size_t rvlen, char *err,
                     size_t errlen)
{
    memset(rec, 0, sizeof(*rec));
    if (rv && rvlen)
        rv[0] = '\0';
    if (!cJSON_IsObject(lease)) {
        snprintf(err, errlen, "the Lease is not a JSON object");
        return KS_EINVAL;
    }
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(lease, "metadata");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
    if (rv && rvlen && cJSON_IsString(v))
        snprintf(rv, rvlen, "%s", v->valuestring);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
    if (!spec || cJSON_IsNull(spec))
        return 0; /* an empty spec: no holder */
    if (!cJSON_IsObject(spec)) {
        snprintf(err, errlen, "Lease spec is not an object");
        return KS_EINVAL;
    }
#define F(name) cJSON_GetObjectItemCaseSensitive(spec, name)
    int rc;
    if ((rc = copy_str(rec->holder, sizeof rec->holder, F("holderIdentity"), "holderIdentity", err,
                       errlen)) != 0 ||
        (rc = copy_int(&rec->lease_duration_seconds, F("leaseDurationSeconds"),
                       "leaseDurationSeconds", err, errlen)) != 0 ||
        (rc = copy_str(rec->acquire_time, sizeof rec->acquire_time, F("acquireTime"), "acquireTime",
                       err, errlen)) != 0 ||
        (rc = copy_str(rec->renew_time, sizeof rec->renew_time, F("renewTime"), "renewTime", err,
                       errlen)) != 0 ||
        (rc = copy_int(&rec->lease_transitions, F("leaseTransitions"), "leaseTransitions", err,
                       errlen)) != 0)
        return rc;
#undef F
    return 0;
}

cJSON *ks__lease_encode(const cJSON *seen, const char *ns, const char *name,
                        const ks_lease_record *rec)
{
    cJSON *o = seen ? cJSON_Duplicate(seen, 1) : cJSON_CreateObject();
    cJSON *spec = cJSON_CreateObject();
    if (!o || !spec)
        goto oom;
    if (!seen) {
        cJSON *meta = NULL;
        if (!cJSON_AddStringToObject(o, "apiVersion", "coordination.k8s.io/v1") ||
            !cJSON_AddStringToObject(o, "kind", "Lease") ||
            !(meta = cJSON_AddObjectToObject(o, "metadata")) ||
            !cJSON_AddStringToObject(meta, "name", name) ||
            !cJSON_AddStringToObject(meta, "namespace", ns))
            goto oom;
    } else {
        /* The answer of a GET or PUT; the server wants kind and apiVersion on a PUT body too. */
        if (!cJSON_GetObjectItemCaseSensitive(o, "apiVersion"))
            cJSON_AddStringToObject(o, "apiVersion", "coordination.k8s.io/v1");
        if (!cJSON_GetObjectItemCaseSensitive(o, "kind"))
            cJSON_AddStringToObject(o, "kind", "Lease");
        cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
        if (meta)
            cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
    }
    /* LeaderElectionRecordToLeaseSpec: holderIdentity, leaseDurationSeconds, acquireTime,
     * renewTime, leaseTransitions (strategy and preferredHolder only for coordinated election). */
    if (!cJSON_AddStringToObject(spec, "holderIdentity", rec->holder) ||
        !cJSON_AddNumberToObject(spec, "leaseDurationSeconds", rec->lease_duration_seconds) ||
        (rec->acquire_time[0] &&
         !cJSON_AddStringToObject(spec, "acquireTime", rec->acquire_time)) ||
        (rec->renew_time[0] && !cJSON_AddStringToObject(spec, "renewTime", rec->renew_time)) ||
        !cJSON_AddNumberToObject(spec, "leaseTransitions", rec->lease_transitions))
        goto oom;
    cJSON_DeleteItemFromObjectCaseSensitive(o, "spec");
    cJSON_AddItemToObject(o, "spec", spec);
    return o;
oom:
    cJSON_Delete(o);
    cJSON_Delete(spec);
    return NULL;
}

/* The time truncated to whole seconds, as metav1.Time marshals it: the text before the
 * fraction ("2006-01-02T15:04:05"), the zone letter aside (the API server writes UTC). */
static size_t seconds_len(const char *t)
{
    size_t n = strcspn(t, ".Z+");
    return n;
}

static int same_seconds(const char *a, const char *b)
{
    size_t na = seconds_len(a), nb = seconds_len(b);
    return na == nb && strncmp(a, b, na) == 0;
}

int ks__lease_record_same(const ks_lease_record *a, const ks_lease_record *b)
{
    return strcmp(a->holder, b->holder) == 0 &&
           a->lease_duration_seconds == b->lease_duration_seconds &&
           a->lease_transitions == b->lease_transitions &&
           same_seconds(a->acquire_time, b->acquire_time) &&
           same_seconds(a->renew_time, b->renew_time);
}

ks_le_decision ks__le_decide(const ks_lease_record *observed, int64_t observed_at_ms,
                             int64_t now_ms, const char *identity)
{
    int mine = strcmp(observed->holder, identity) == 0;
    /* isLeaseValid: observedTime + leaseDurationSeconds (the record's own) is after now. */
    int valid = observed_at_ms + (int64_t)observed->lease_duration_seconds * 1000 > now_ms;
    if (observed->holder[0] && valid && !mine)
        return KS_LE_WAIT;
    return mine ? KS_LE_RENEW : KS_LE_ACQUIRE;
}

void ks__le_next_record(const ks_lease_record *old, ks_le_decision d, const char *identity,
                        int64_t lease_duration_ms, const char *now, ks_lease_record *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->holder, sizeof out->holder, "%s", identity);
    out->lease_duration_seconds = (int)(lease_duration_ms / 1000);
    snprintf(out->renew_time, sizeof out->renew_time, "%s", now);
    snprintf(out->acquire_time, sizeof out->acquire_time, "%s", now);
    if (!old)
        return; /* the Lease is created: leaseTransitions 0 */
    if (d == KS_LE_RENEW) {
        snprintf(out->acquire_time, sizeof out->acquire_time, "%s", old->acquire_time);
        out->lease_transitions = old->lease_transitions;
    } else {
        out->lease_transitions = old->lease_transitions + 1;
    }
}

void ks__le_release_record(const ks_lease_record *observed, const char *now, ks_lease_record *out)
{
    memset(out, 0, sizeof(*out));
    out->lease_duration_seconds = 1;
    out->lease_transitions = observed->lease_transitions;
    snprintf(out->renew_time, sizeof out->renew_time, "%s", now);
    snprintf(out->acquire_time, sizeof out->acquire_time, "%s", now);
}

int ks__le_check(int is_leader, int64_t observed_at_ms, int64_t now_ms, int64_t lease_duration_ms,
                 int64_t tolerance_ms)
{
    if (!is_leader)
        return 1; /* upstream: "not concerned with the case that we are hot standby" */
    return now_ms - observed_at_ms <= lease_duration_ms + tolerance_ms;
}

int ks__le_identity(const char *hostname, char *buf, size_t len)
{
    unsigned char u[16];
    size_t got = 0;
    while (got < sizeof u) {
        ssize_t n = getrandom(u + got, sizeof u - got, 0);
        if (n <= 0)
            return KS_EIO;
        got += (size_t)n;
    }
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4 */
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(buf, len, "%s_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             hostname, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
             u[12], u[13], u[14], u[15]);
    return 0;
}

/* --- flags ----------------------------------------------------------------------------------- */

enum { FLAG_BOOL, FLAG_DURATION, FLAG_STRING };

static const struct {
    const char *name;
    unsigned bit;
    int kind;
} k_flags[] = {
    {"leader-elect", KS_LE_FLAG_LEADER_ELECT, FLAG_BOOL},
    {"leader-elect-lease-duration", KS_LE_FLAG_LEASE_DURATION, FLAG_DURATION},
    {"leader-elect-renew-deadline", KS_LE_FLAG_RENEW_DEADLINE, FLAG_DURATION},
    {"leader-elect-retry-period", KS_LE_FLAG_RETRY_PERIOD, FLAG_DURATION},
    {"leader-elect-resource-lock", KS_LE_FLAG_RESOURCE_LOCK, FLAG_STRING},
    {"leader-elect-resource-name", KS_LE_FLAG_RESOURCE_NAME, FLAG_STRING},
    {"leader-elect-resource-namespace", KS_LE_FLAG_RESOURCE_NAMESPACE, FLAG_STRING},
};

/* strconv.ParseBool. */
static int parse_bool(const char *s, int *out)
{
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < 6; i++) {
        if (strcmp(s, t[i]) == 0)
            return *out = 1, 0;
        if (strcmp(s, f[i]) == 0)
            return *out = 0, 0;
    }
    return -1;
}

int ks__le_parse_flag(ks_leader_election_flags *f, const char *arg, const char *next,
                      int *used_next, char *err, size_t errlen)
{
    *used_next = 0;
    if (strncmp(arg, "--", 2) != 0)
        return 0;
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
    size_t i = 0;
    for (; i < sizeof(k_flags) / sizeof(k_flags[0]); i++)
        if (strlen(k_flags[i].name) == nlen && strncmp(k_flags[i].name, name, nlen) == 0)
            break;
    if (i == sizeof(k_flags) / sizeof(k_flags[0]))
        return 0;
    const char *fname = k_flags[i].name, *val = eq ? eq + 1 : NULL;
    if (k_flags[i].kind == FLAG_BOOL) {
        /* pflag: a bool flag takes its value only after "=", never from the next argument. */
        int b = 1;
        if (val && parse_bool(val, &b) != 0) {
            snprintf(err, errlen,
                     "invalid argument \"%s\" for \"--%s\" flag: strconv.ParseBool: parsing "
                     "\"%s\": invalid syntax",
                     val, fname, val);
            return KS_EINVAL;
        }
        f->leader_elect = b;
        f->set |= k_flags[i].bit;
        return 1;
    }
    if (!val) {
        if (!next) {
            snprintf(err, errlen, "flag needs an argument: --%s", fname);
            return KS_EINVAL;
        }
        val = next;
        *used_next = 1;
    }
    if (k_flags[i].kind == FLAG_DURATION) {
        int64_t ns;
        if (ks__duration_parse(val, &ns) != 0) {
            snprintf(err, errlen,
                     "invalid argument \"%s\" for \"--%s\" flag: time: invalid duration \"%s\" "
                     "(a Go duration such as \"15s\", \"1m30s\" or \"500ms\")",
                     val, fname, val);
            *used_next = 0;
            return KS_EINVAL;
        }
        if (k_flags[i].bit == KS_LE_FLAG_LEASE_DURATION)
            f->lease_duration_ns = ns;
        else if (k_flags[i].bit == KS_LE_FLAG_RENEW_DEADLINE)
            f->renew_deadline_ns = ns;
        else
            f->retry_period_ns = ns;
    } else if (k_flags[i].bit == KS_LE_FLAG_RESOURCE_LOCK) {
        f->resource_lock = val;
    } else if (k_flags[i].bit == KS_LE_FLAG_RESOURCE_NAME) {
        f->resource_name = val;
    } else {
        f->resource_namespace = val;
    }
    f->set |= k_flags[i].bit;
    return 1;
}
