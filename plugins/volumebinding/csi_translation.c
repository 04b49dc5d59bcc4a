/*
 * VolumeBinding's in-tree-to-CSI translation of a PV's node affinity: see csi_translation.h.
 * Upstream: k8s.io/csi-translation-lib v0.37 (translate.go, plugins/in_tree_volume.go,
 * aws_ebs.go, gce_pd.go, azure_disk.go, openstack_cinder.go, portworx.go) and
 * pkg/scheduler/framework/plugins/volumebinding/binder.go (v1.37).
 */
#include "csi_translation.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define PLUGIN_NAME_GCE_PD "kubernetes.io/gce-pd"
#define PLUGIN_NAME_AWS_EBS "kubernetes.io/aws-ebs"
#define PLUGIN_NAME_AZURE_DISK "kubernetes.io/azure-disk"
#define PLUGIN_NAME_CINDER "kubernetes.io/cinder"
#define PLUGIN_NAME_PORTWORX "kubernetes.io/portworx-volume"

/* labelMultiZoneDelimiter */
#define MULTI_ZONE_DELIMITER "__"

static const char *const k_plugin_names[VB_NMIG] = {PLUGIN_NAME_GCE_PD, PLUGIN_NAME_AWS_EBS,
                                                    PLUGIN_NAME_AZURE_DISK, PLUGIN_NAME_CINDER,
                                                    PLUGIN_NAME_PORTWORX};

/* The drivers' topology keys (GCEPDTopologyKey, AWSEBSTopologyKey, CinderTopologyKey); Azure
 * Disk's and Portworx's TranslateInTreePVToCSI leave the node affinity alone. */
static const char *const k_topology_keys[VB_NMIG] = {
    "topology.gke.io/zone", "topology.ebs.csi.aws.com/zone", NULL,
    "topology.cinder.csi.openstack.org/zone", NULL};

void vb_csi_syms_init(vb_csi_syms *s)
{
    s->zone_ga = ks_intern("topology.kubernetes.io/zone");
    s->zone_beta = ks_intern("failure-domain.beta.kubernetes.io/zone");
    s->region_ga = ks_intern("topology.kubernetes.io/region");
    s->region_beta = ks_intern("failure-domain.beta.kubernetes.io/region");
    for (int i = 0; i < VB_NMIG; i++)
        s->topology_key[i] = k_topology_keys[i] ? ks_intern(k_topology_keys[i]) : KS_SYM_ABSENT;
    s->ann_migrated = ks_intern("storage.alpha.kubernetes.io/migrated-plugins");
}

int vb_pv_plugin(const ks_pv_view *v)
{
    switch (v->source) {
    case KS_VOLSRC_GCE_PD:
        return VB_MIG_GCE_PD;
    case KS_VOLSRC_AWS_EBS:
        return VB_MIG_AWS_EBS;
    case KS_VOLSRC_AZURE_DISK:
        return VB_MIG_AZURE_DISK;
    case KS_VOLSRC_CINDER:
        return VB_MIG_CINDER;
    case KS_VOLSRC_PORTWORX:
        return VB_MIG_PORTWORX;
    default:
        /* vSphere and Azure File are migratable, but isCSIMigrationOnForPlugin is false for
         * them: tryTranslatePVToCSI returns them unmodified, as any other source */
        return VB_MIG_NONE;
    }
}

int vb_plugin_migrated_on_node(const vb_csi_syms *s, int plugin, const ks_csi_node *cn)
{
    if (plugin < 0 || plugin >= VB_NMIG || !cn)
        return 0;
    const ks_csi_node_view *v = ks_csi_node_view_of(cn);
    ks_sym ann = ks_labels_get(v->annotations, v->nannotations, s->ann_migrated);
    const char *p = ann != KS_SYM_ABSENT ? ks_sym_str(ann) : NULL;
    if (!p || !*p) /* an empty annotation is the empty set (not {""}) */
        return 0;
    const char *name = k_plugin_names[plugin];
    size_t n = strlen(name);
    for (;;) { /* strings.Split(mpa, ","), then set membership: exact tokens */
        size_t len = strcspn(p, ",");
        if (len == n && memcmp(p, name, n) == 0)
            return 1;
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

/* ---- the zone list of addTopology -------------------------------------------------------- */

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Calls fn on each space-trimmed, non-empty "__"-separated token of zones; stops when it
 * returns non-zero and returns that. */
static int each_zone(const char *zones, int (*fn)(const char *z, size_t n, void *arg), void *arg)
{
    const char *p = zones;
    for (;;) {
        const char *d = strstr(p, MULTI_ZONE_DELIMITER);
        size_t len = d ? (size_t)(d - p) : strlen(p);
        const char *z = p;
        size_t n = len;
        while (n && is_space(*z))
            z++, n--;
        while (n && is_space(z[n - 1]))
            n--;
        if (n) {
            int r = fn(z, n, arg);
            if (r)
                return r;
        }
        if (!d)
            return 0;
        p = d + 2;
    }
}

static int zone_nonempty(const char *z, size_t n, void *arg)
{
    (void)z;
    (void)n;
    (void)arg;
    return 1;
}

static int zone_equals(const char *z, size_t n, void *arg)
{
    const char *value = arg;
    return strlen(value) == n && memcmp(z, value, n) == 0;
}

int vb_zones_have(const char *zones, const char *value)
{
    return zones && value && each_zone(zones, zone_equals, (void *)value);
}

/* ---- topology (translateTopologyFromInTreeToCSI) ----------------------------------------- */

/* TopologyKeyExist: some term has a matchExpressions entry with the key. */
static int key_exists(const ks_pv_view *v, ks_sym key)
{
    if (!v->has_node_affinity)
        return 0;
    for (uint32_t t = 0; t < v->nnode_terms; t++)
        for (uint32_t i = 0; i < v->node_terms[t].nexprs; i++)
            if (v->node_terms[t].exprs[i].key == key)
                return 1;
    return 0;
}

/* getTopologyValues(pv, key) is not empty: some requirement with the key has a value. */
static int key_has_values(const ks_pv_view *v, ks_sym key)
{
    if (!v->has_node_affinity)
        return 0;
    for (uint32_t t = 0; t < v->nnode_terms; t++)
        for (uint32_t i = 0; i < v->node_terms[t].nexprs; i++)
            if (v->node_terms[t].exprs[i].key == key && v->node_terms[t].exprs[i].nvalues > 0)
                return 1;
    return 0;
}

static void translate_topology(const vb_csi_syms *s, const ks_pv_view *v, ks_sym csi_key,
                               vb_pv_translation *out)
{
    /* getTopologyLabel: the affinity's GA zone key, its beta one, the labels' GA, the labels'
     * beta, else GA */
    ks_sym zone = s->zone_ga, region = s->region_ga;
    if (key_exists(v, s->zone_ga))
        ;
    else if (key_exists(v, s->zone_beta))
        zone = s->zone_beta, region = s->region_beta;
    else if (ks_labels_get(v->labels, v->nlabels, s->zone_ga) != KS_SYM_ABSENT)
        ;
    else if (ks_labels_get(v->labels, v->nlabels, s->zone_beta) != KS_SYM_ABSENT)
        zone = s->zone_beta, region = s->region_beta;

    if (key_has_values(v, zone)) {
        /* replaceTopology: in-tree topology has precedence over the labels */
        out->zone_from = zone;
        out->zone_to = csi_key;
    } else {
        ks_sym label = ks_labels_get(v->labels, v->nlabels, zone);
        const char *zones = label != KS_SYM_ABSENT ? ks_sym_str(label) : NULL;
        /* addTopology: no valid zone is an error the caller ignores, the PV unchanged */
        if (zones && each_zone(zones, zone_nonempty, NULL)) {
            out->add_key = csi_key;
            out->add_zones = zones;
        }
    }
    /* a beta region in the affinity becomes the GA one, for nodes with only GA labels */
    if (region == s->region_beta && key_has_values(v, s->region_beta)) {
        out->region_from = s->region_beta;
        out->region_to = s->region_ga;
    }
}

/* ---- the plugins' errors ------------------------------------------------------------------ */

/* A small string builder that never overflows (truncates). */
typedef struct sbuf {
    char *p;
    size_t cap, len;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n && b->len + 1 < b->cap; i++)
        b->p[b->len++] = s[i];
    b->p[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

/* strconv.Quote of s[0..n): ASCII escapes, other bytes as they are. */
static void sb_quote(sbuf *b, const char *s, size_t n)
{
    sb_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        const char *e = NULL;
        switch (c) {
        case '"':
            e = "\\\"";
            break;
        case '\\':
            e = "\\\\";
            break;
        case '\a':
            e = "\\a";
            break;
        case '\b':
            e = "\\b";
            break;
        case '\f':
            e = "\\f";
            break;
        case '\n':
            e = "\\n";
            break;
        case '\r':
            e = "\\r";
            break;
        case '\t':
            e = "\\t";
            break;
        case '\v':
            e = "\\v";
            break;
        default:
            if (c < 0x20 || c == 0x7f) {
                snprintf(esc, sizeof(esc), "\\x%02x", c);
                e = esc;
            }
        }
        if (e)
            sb_str(b, e);
        else
            sb_put(b, (const char *)&c, 1);
    }
    sb_put(b, "\"", 1);
}

static int is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int hex_val(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

enum { ESC_PATH, ESC_FRAGMENT, ESC_HOST, ESC_USER };

/* net/url shouldEscape(c, encodeHost) for an ASCII byte. */
static int host_char_bad(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return 0;
    return !strchr("!$&'()*+,;=:[]<>\"-_.~", c) || c == '\0';
}

/* net/url unescape's validation of s[0..n) in `mode`; 0, or -1 with the inner error in b. When
 * dec is not NULL the unescaped bytes are written there (room for n + 1). */
static int url_unescape(const char *s, size_t n, int mode, char *dec, sbuf *b)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == '%') {
            if (i + 2 >= n || !is_hex(s[i + 1]) || !is_hex(s[i + 2]) ||
                (mode == ESC_HOST && hex_val(s[i + 1]) < 8 && memcmp(s + i, "%25", 3) != 0)) {
                sb_str(b, "invalid URL escape ");
                sb_quote(b, s + i, n - i > 3 ? 3 : n - i);
                return -1;
            }
            if (dec)
                dec[o++] = (char)(hex_val(s[i + 1]) * 16 + hex_val(s[i + 2]));
            i += 3;
            continue;
        }
        if (mode == ESC_HOST && (unsigned char)s[i] < 0x80 && host_char_bad((unsigned char)s[i])) {
            sb_str(b, "invalid character ");
            sb_quote(b, s + i, 1);
            sb_str(b, " in host name");
            return -1;
        }
        if (dec)
            dec[o++] = s[i];
        i++;
    }
    if (dec)
        dec[o] = '\0';
    return 0;
}

/* net/url validOptionalPort */
static int valid_optional_port(const char *p, size_t n)
{
    if (n == 0)
        return 1;
    if (p[0] != ':')
        return 0;
    for (size_t i = 1; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return 0;
    return 1;
}

/* net/url parseAuthority's checks; 0, or -1 with the inner error in b. */
static int url_authority(const char *a, size_t n, sbuf *b)
{
    size_t at = n;
    for (size_t i = n; i > 0; i--)
        if (a[i - 1] == '@') {
            at = i - 1;
            break;
        }
    const char *host = at < n ? a + at + 1 : a;
    size_t hn = at < n ? n - at - 1 : n;
    for (size_t i = hn; i > 1; i--)
        if (host[i - 1] == '[') { /* a bracket not first */
            sb_str(b, "invalid IP-literal");
            return -1;
        }
    if (hn && host[0] == '[') {
        size_t close = hn;
        for (size_t i = hn; i > 0; i--)
            if (host[i - 1] == ']') {
                close = i - 1;
                break;
            }
        if (close == hn) {
            sb_str(b, "missing ']' in host");
            return -1;
        }
        if (!valid_optional_port(host + close + 1, hn - close - 1)) {
            sb_str(b, "invalid port ");
            sb_quote(b, host + close + 1, hn - close - 1);
            sb_str(b, " after host");
            return -1;
        }
    } else {
        for (size_t i = hn; i > 0; i--)
            if (host[i - 1] == ':') {
                if (!valid_optional_port(host + i - 1, hn - i + 1)) {
                    sb_str(b, "invalid port ");
                    sb_quote(b, host + i - 1, hn - i + 1);
                    sb_str(b, " after host");
                    return -1;
                }
                break;
            }
    }
    if (url_unescape(host, hn, ESC_HOST, NULL, b) != 0)
        return -1;
    if (at == n)
        return 0;
    for (size_t i = 0; i < at; i++) { /* validUserinfo */
        char c = a[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              strchr("-._:~!$&'()*+,;=%@", c))) {
            sb_str(b, "net/url: invalid userinfo");
            return -1;
        }
    }
    return url_unescape(a, at, ESC_USER, NULL, b);
}

/* KubernetesVolumeIDToEBSVolumeID's failure, written to b ("Invalid disk name (...): parse
 * ...", "Invalid format for AWS volume (...)"); 0 when the id translates. The URL is parsed as
 * net/url.Parse does for an "aws://" string: the checks that can fail there. */
static int ebs_id_error(const char *id, sbuf *b)
{
    if (strncmp(id, "aws://", 6) != 0)
        return 0; /* a bare volume id (vol-1234...) */
    size_t total = strlen(id);
    size_t un = strcspn(id, "#"); /* Parse: the fragment is cut first */
    char inner[VB_TRANSLATION_ERR_MAX] = "";
    sbuf ib = {inner, sizeof(inner), 0};
    int bad = 0, whole = 0;
    for (size_t i = 0; i < un && !bad; i++)
        if ((unsigned char)id[i] < 0x20 || id[i] == 0x7f) {
            sb_str(&ib, "net/url: invalid control character in URL");
            bad = 1;
        }
    /* rest after the scheme; the query is cut at the first '?' */
    const char *rest = id + 4; /* "//host/path?query" */
    size_t rn = un - 4;
    size_t q = strcspn(rest, "?#");
    if (q < rn)
        rn = q;
    const char *auth = rest + 2, *path = rest + rn;
    size_t an = rn - 2, pn = 0;
    for (size_t i = 0; i < an; i++)
        if (auth[i] == '/') {
            path = auth + i;
            pn = an - i;
            an = i;
            break;
        }
    if (!bad && url_authority(auth, an, &ib) != 0)
        bad = 1;
    char dec[VB_TRANSLATION_ERR_MAX];
    if (pn >= sizeof(dec))
        pn = sizeof(dec) - 1; /* a volume id this long fails the format check anyway */
    if (!bad && url_unescape(path, pn, ESC_PATH, dec, &ib) != 0)
        bad = 1;
    if (!bad && un < total && url_unescape(id + un + 1, total - un - 1, ESC_FRAGMENT, NULL, &ib)) {
        bad = 1;
        whole = 1; /* setFragment's error names the whole URL */
    }
    if (bad) {
        sb_str(b, "failed to translate Kubernetes ID to EBS Volume ID Invalid disk name (");
        sb_str(b, id);
        sb_str(b, "): parse ");
        sb_quote(b, id, whole ? total : un);
        sb_str(b, ": ");
        sb_str(b, inner);
        return -1;
    }
    /* awsID = strings.Trim(url.Path, "/"), then ^vol-[^/]*$ */
    char *p = dec;
    while (*p == '/')
        p++;
    size_t n = strlen(p);
    while (n && p[n - 1] == '/')
        n--;
    p[n] = '\0';
    if (strncmp(p, "vol-", 4) == 0 && !strchr(p, '/'))
        return 0;
    sb_str(b, "failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (");
    sb_str(b, id);
    sb_str(b, ")");
    return -1;
}

typedef struct region_set {
    size_t n;
    const char *r[32]; /* distinct "{locale}-{region}" prefixes */
    size_t len[32];
    const char *bad;
    size_t bad_len;
} region_set;

static int collect_region(const char *z, size_t n, void *arg)
{
    region_set *rs = arg;
    /* strings.Split(zone, "-") must give exactly 3 parts */
    size_t dashes = 0, second = 0;
    for (size_t i = 0; i < n; i++)
        if (z[i] == '-' && ++dashes == 2)
            second = i;
    if (dashes != 2) {
        rs->bad = z;
        rs->bad_len = n;
        return 1;
    }
    for (size_t i = 0; i < rs->n; i++)
        if (rs->len[i] == second && memcmp(rs->r[i], z, second) == 0)
            return 0;
    if (rs->n < 32) {
        rs->r[rs->n] = z;
        rs->len[rs->n++] = second;
    }
    return 0;
}

/* gceGetRegionFromZones over strings.Split(label, "__"), untrimmed and empties kept (each
 * token must be {locale}-{region}-{zone}); 0, or -1 with the error in b. */
static int gce_region_error(const char *label, sbuf *b)
{
    region_set rs = {0};
    const char *p = label;
    for (;;) {
        const char *d = strstr(p, MULTI_ZONE_DELIMITER);
        size_t len = d ? (size_t)(d - p) : strlen(p);
        if (collect_region(p, len, &rs)) /* an empty token is malformed too */
            break;
        if (!d)
            break;
        p = d + 2;
    }
    if (rs.bad) {
        sb_str(b, "failed to get region from zones: zone in unexpected format, expected: "
                  "{locale}-{region}-{zone}, got: ");
        sb_put(b, rs.bad, rs.bad_len);
        return -1;
    }
    if (rs.n == 1)
        return 0;
    /* fmt's %v of a sets.String: map[a:{} b:{}], keys sorted */
    for (size_t i = 1; i < rs.n; i++)
        for (size_t j = i; j > 0; j--) {
            size_t m = rs.len[j - 1] < rs.len[j] ? rs.len[j - 1] : rs.len[j];
            int c = memcmp(rs.r[j - 1], rs.r[j], m);
            if (c < 0 || (c == 0 && rs.len[j - 1] <= rs.len[j]))
                break;
            const char *t = rs.r[j];
            size_t tl = rs.len[j];
            rs.r[j] = rs.r[j - 1];
            rs.len[j] = rs.len[j - 1];
            rs.r[j - 1] = t;
            rs.len[j - 1] = tl;
        }
    sb_str(b,
           "failed to get region from zones: multiple or no regions gotten from zones, got: map[");
    for (size_t i = 0; i < rs.n; i++) {
        if (i)
            sb_str(b, " ");
        sb_put(b, rs.r[i], rs.len[i]);
        sb_str(b, ":{}");
    }
    sb_str(b, "]");
    return -1;
}

/* The azureDisk source's kind in the PV's compact JSON ("azureDisk":{...,"kind":"..."}): the
 * source is a flat object, and inside a JSON string the same text would carry backslashes. */
static int azure_disk_kind(const char *json, char *out, size_t cap)
{
    const char *p = json ? strstr(json, "\"azureDisk\":{") : NULL;
    if (!p)
        return 0;
    p += strlen("\"azureDisk\":{");
    const char *end = strchr(p, '}');
    const char *k = strstr(p, "\"kind\":\"");
    if (!k || (end && k > end))
        return 0;
    k += strlen("\"kind\":\"");
    size_t n = strcspn(k, "\"");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, k, n);
    out[n] = '\0';
    return 1;
}

void vb_translate_pv(const vb_csi_syms *s, const ks_pv_view *v, vb_pv_translation *out)
{
    memset(out, 0, offsetof(vb_pv_translation, err));
    out->err[0] = '\0';
    out->zone_from = out->zone_to = out->region_from = out->region_to = out->add_key =
        KS_SYM_ABSENT;
    out->plugin = vb_pv_plugin(v);
    if (out->plugin == VB_MIG_NONE)
        return;
    sbuf b = {out->err, sizeof(out->err), 0};
    sb_str(&b, "could not translate pv: ");
    size_t prefix = b.len;
    switch (out->plugin) {
    case VB_MIG_AWS_EBS:
        if (ebs_id_error(ks_sym_str(v->source_id), &b) != 0)
            out->failed = 1;
        break;
    case VB_MIG_GCE_PD: {
        /* the volume handle's zones: the beta label, else the GA one; only a multi-zone
         * (regional) value can fail */
        ks_sym l = ks_labels_get(v->labels, v->nlabels, s->zone_beta);
        const char *zones = l != KS_SYM_ABSENT ? ks_sym_str(l) : "";
        if (!*zones) {
            l = ks_labels_get(v->labels, v->nlabels, s->zone_ga);
            zones = l != KS_SYM_ABSENT ? ks_sym_str(l) : "";
        }
        if (strstr(zones, MULTI_ZONE_DELIMITER) && gce_region_error(zones, &b) != 0)
            out->failed = 1;
        break;
    }
    case VB_MIG_AZURE_DISK: {
        char kind[128];
        if (azure_disk_kind(v->json, kind, sizeof(kind)) && strcasecmp(kind, "Managed") != 0) {
            sb_str(&b, "kind(");
            sb_str(&b, kind);
            sb_str(&b, ") is not supported in csi migration");
            out->failed = 1;
        }
        break;
    }
    default: /* Cinder, Portworx: nothing fails */
        break;
    }
    if (out->failed)
        return;
    out->err[prefix] = '\0';
    if (s->topology_key[out->plugin] != KS_SYM_ABSENT)
        translate_topology(s, v, s->topology_key[out->plugin], out);
}
