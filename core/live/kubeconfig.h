/*
 * Where the kube-apiserver is and how to authenticate to it: a kubeconfig file (YAML or JSON, as
 * kubectl writes it) or the in-cluster service-account configuration of a pod, chosen the way
 * kube-scheduler chooses (ks__kubeconfig_resolve).
 *
 * What is understood: current-context or an explicit context; the cluster's server,
 * certificate-authority (file) or certificate-authority-data (base64 PEM),
 * insecure-skip-tls-verify, tls-server-name and proxy-url; the user's client-certificate(-data),
 * client-key(-data), token and tokenFile. Relative file paths are resolved against the
 * directory of the kubeconfig, as clientcmd does. exec and auth-provider plugins and basic
 * authentication are refused with a sentence that says so.
 *
 * Certificates and keys given as files stay files (libcurl reads them for each new connection,
 * so rotated files are picked up); `*-data` stays in memory and reaches libcurl as a blob. Only a
 * libcurl without blob support gets a private temporary file (ks__kubeconfig_pem_path), removed
 * by ks__kubeconfig_free.
 *
 * Threads: loading and freeing on one thread; afterwards every function here may be called from
 * any thread (the bearer token and the temporary files are behind a mutex), so one loaded config
 * can serve one ks_api per thread.
 */
#ifndef KS_CORE_KUBECONFIG_H
#define KS_CORE_KUBECONFIG_H

#include <stddef.h>
#include <stdint.h>

/* A monotonic clock in nanoseconds, injectable so that tests control time (also used by the
 * API client's rate limiter). ud is the pointer given with the function. */
typedef int64_t (*ks_clock_fn)(void *ud);
int64_t ks__clock_monotonic(void *ud); /* CLOCK_MONOTONIC; ud unused */

/* PEM material from either a file or a `*-data` field (never both). */
typedef struct ks_kc_pem {
    char *file;          /* resolved path, or NULL */
    unsigned char *data; /* decoded `*-data` bytes (NUL-terminated for convenience), or NULL */
    size_t len;          /* bytes in data */
    char *desc;          /* where it came from, for messages: "/etc/k/ca.crt" or
                            "certificate-authority-data of cluster \"c\" in kubeconfig /x" */
    char *tmpfile;       /* private: data written out by ks__kubeconfig_pem_path */
} ks_kc_pem;

struct ks_kc_token; /* private: the bearer token and its file */

typedef struct ks_kubeconfig {
    char *origin;  /* "kubeconfig /abs/path" or "in-cluster config", starts every message */
    char *path;    /* the kubeconfig file as given; NULL for in-cluster or --master only */
    char *context; /* names chosen in the file; NULL when not from a file */
    char *cluster;
    char *user;            /* NULL or "" for an anonymous context */
    char *server;          /* "https://host:port[/prefix]", no trailing slash */
    char *namespace;       /* the context's namespace / the pod's namespace file; NULL if unset */
    char *tls_server_name; /* NULL unless set: name to verify the server certificate against */
    char *proxy_url;       /* NULL unless set */
    int insecure;          /* insecure-skip-tls-verify */
    ks_kc_pem ca;          /* empty (all NULL): the system trust store */
    ks_kc_pem cert, key;   /* client certificate and key; both or neither */
    struct ks_kc_token *tok;
} ks_kubeconfig;

/* Loads `path`. context: the context to use, or NULL for current-context. On error returns
 * KS_EIO (unreadable file), KS_EPARSE (YAML), KS_ENOTFOUND (context/cluster/user missing),
 * KS_EINVAL (anything else wrong) or KS_ENOMEM, with a message naming the file, the
 * context/cluster/user and what is wrong in err; *out is then NULL. Free with
 * ks__kubeconfig_free. */
int ks__kubeconfig_load(const char *path, const char *context, ks_kubeconfig **out, char *err,
                        size_t errlen);

/* The in-cluster config (client-go rest.InClusterConfig): server from KUBERNETES_SERVICE_HOST
 * and KUBERNETES_SERVICE_PORT, bearer token from sa_dir/token (re-read when it changes), CA from
 * sa_dir/ca.crt (if unreadable, the system trust store is used and ca.desc says why, as
 * client-go only logs it), namespace from sa_dir/namespace. sa_dir NULL means
 * KS_SERVICEACCOUNT_DIR. Errors as ks__kubeconfig_load. */
#define KS_SERVICEACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
int ks__kubeconfig_in_cluster(const char *sa_dir, ks_kubeconfig **out, char *err, size_t errlen);

/* The places kube-scheduler takes its connection from. Strings may be NULL or "". */
typedef struct ks_kubeconfig_sources {
    int have_config_file;          /* --config was given */
    const char *config_kubeconfig; /* clientConnection.kubeconfig of that file */
    const char *flag_kubeconfig;   /* deprecated --kubeconfig flag */
    const char *master;            /* --master: overrides the server URL */
    const char *context;           /* context to use (NULL: current-context) */
    const char *sa_dir;            /* in-cluster directory; NULL: KS_SERVICEACCOUNT_DIR */
} ks_kubeconfig_sources;

/* Which kubeconfig file upstream would load, or NULL for in-cluster (or --master alone):
 * clientConnection.kubeconfig when a --config file is given (the deprecated --kubeconfig flag
 * is then ignored, as upstream ignores every deprecated flag with --config), else the
 * --kubeconfig flag. *note (may be NULL) gets a sentence worth logging as a warning, or NULL. */
const char *ks__kubeconfig_pick(const ks_kubeconfig_sources *s, const char **note);

/* Loads what ks__kubeconfig_pick picks: the file (with --master overriding its server), else
 * --master alone (no credentials, as clientcmd.BuildConfigFromFlags), else in-cluster. */
int ks__kubeconfig_resolve(const ks_kubeconfig_sources *s, ks_kubeconfig **out, char *err,
                           size_t errlen);

void ks__kubeconfig_free(ks_kubeconfig *kc); /* NULL is a no-op */

/* The bearer token to send, or *token = NULL when the config has none. *token is malloc'd;
 * the caller frees it. A token from a file (tokenFile, in-cluster) is re-read when the file's
 * mtime, size or inode changed, checked at most once a minute by the config's clock (client-go
 * re-reads its cached file token source each minute). A failed re-read keeps the previous
 * token and logs a warning. Returns 0 or KS_ENOMEM. Any thread. */
int ks__kubeconfig_token(ks_kubeconfig *kc, char **token);

/* Where the token comes from, for messages: "token of user \"u\" in kubeconfig /x",
 * "/path/token", or NULL when there is no token. Valid until ks__kubeconfig_free. */
const char *ks__kubeconfig_token_desc(const ks_kubeconfig *kc);

/* The offset of the first control character (a byte below 0x20, or DEL) in a bearer token, or -1
 * when there is none. CR or LF would end the Authorization header line and start another, so such
 * a token is never sent: the loader refuses it, a re-read keeps the previous token, and the API
 * client checks again before building the header. Any thread; pure. */
long ks__kubeconfig_token_ctl(const char *token);

/* Replaces the clock used for the token file check (tests). Call before sharing the config. */
void ks__kubeconfig_set_clock(ks_kubeconfig *kc, ks_clock_fn fn, void *ud);

/* A file path for `pem`, one of &kc->ca, &kc->cert, &kc->key: its file if it has one, else its
 * data written once to a private temporary file (mode 0600, in $TMPDIR or /tmp) that
 * ks__kubeconfig_free removes. For libcurl builds without blob options. *path is borrowed
 * until ks__kubeconfig_free; NULL (and 0) when pem is empty. Returns 0 or KS_EIO with err set.
 * Any thread. */
int ks__kubeconfig_pem_path(ks_kubeconfig *kc, ks_kc_pem *pem, const char **path, char *err,
                            size_t errlen);

#endif
