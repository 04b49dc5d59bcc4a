/*
 * TLS identity of the serving port (tlsserve.h): files, or a self-signed certificate made at
 * start. Upstream's certutil.GenerateSelfSignedCertKey settings where they apply: valid from one
 * hour ago for one year, CN "localhost@<unix time>", SANs DNS:localhost and IP:127.0.0.1, RSA
 * 2048, key usage for a TLS server. The minimum protocol is TLS 1.2, component-base's default.
 */
#include "live/tlsserve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "kubesched/plugin.h"

struct ks_tls_ctx {
    char *cert_pem, *key_pem;
};

/* OpenSSL's reason for the last failure, or fallback. */
static const char *ssl_reason(char *buf, size_t len, const char *fallback)
{
    unsigned long e = ERR_peek_last_error();
    if (!e) {
        snprintf(buf, len, "%s", fallback);
        return buf;
    }
    ERR_error_string_n(e, buf, len);
    ERR_clear_error();
    return buf;
}

static int add_ext(X509 *cert, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, cert, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    if (!ext)
        return -1;
    int ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok ? 0 : -1;
}

/* A self-signed serving certificate and its key, installed into ctx. */
static int self_signed(SSL_CTX *ctx, char *err, size_t errlen)
{
    char why[256];
    EVP_PKEY *key = EVP_RSA_gen(2048);
    X509 *cert = X509_new();
    unsigned char serial[16];
    BIGNUM *bn = NULL;
    int rc = KS_ENOMEM;
    if (!key || !cert)
        goto out;
    char cn[64];
    snprintf(cn, sizeof cn, "localhost@%lld", (long long)time(NULL));
    X509_NAME *name = X509_get_subject_name(cert);
    if (RAND_bytes(serial, sizeof serial) != 1)
        goto fail;
    serial[0] &= 0x7f; /* a positive serial */
    if (!(bn = BN_bin2bn(serial, sizeof serial, NULL)) ||
        !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)))
        goto fail;
    if (!X509_set_version(cert, 2) || !X509_gmtime_adj(X509_getm_notBefore(cert), -3600) ||
        !X509_gmtime_adj(X509_getm_notAfter(cert), 365L * 24 * 3600) ||
        !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1,
                                    0) ||
        !X509_set_issuer_name(cert, name) || !X509_set_pubkey(cert, key))
        goto fail;
    if (add_ext(cert, NID_basic_constraints, "critical,CA:FALSE") != 0 ||
        add_ext(cert, NID_key_usage, "critical,digitalSignature,keyEncipherment") != 0 ||
        add_ext(cert, NID_ext_key_usage, "serverAuth") != 0 ||
        add_ext(cert, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1") != 0)
        goto fail;
    if (!X509_sign(cert, key, EVP_sha256()) || SSL_CTX_use_certificate(ctx, cert) != 1 ||
        SSL_CTX_use_PrivateKey(ctx, key) != 1)
        goto fail;
    rc = 0;
    goto out;
fail:
    snprintf(err, errlen, "cannot make a self-signed serving certificate: %s",
             ssl_reason(why, sizeof why, "unknown OpenSSL error"));
    rc = KS_EINVAL;
out:
    BN_free(bn);
    X509_free(cert);
    EVP_PKEY_free(key);
    return rc;
}

/* The passphrase callback: none. Without one OpenSSL asks for the passphrase of an encrypted key
 * on the terminal, or reads it from stdin, and a scheduler started with its stdin left open
 * waits there for ever. Upstream (Go's tls.X509KeyPair) does not take encrypted keys either. */
static int no_passphrase(char *buf, int size, int rwflag, void *ud)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    *(int *)ud = 1;
    return -1;
}

static int from_files(SSL_CTX *ctx, const char *cert_file, const char *key_file, char *err,
                      size_t errlen)
{
    char why[256];
    int asked = 0;
    if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
        snprintf(err, errlen,
                 "--tls-cert-file %s: cannot read a PEM certificate from it (%s); give the serving "
                 "certificate (then its intermediates) in PEM",
                 cert_file, ssl_reason(why, sizeof why, "unreadable"));
        return KS_EINVAL;
    }
    SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, &asked);
    int key_ok = SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) == 1;
    SSL_CTX_set_default_passwd_cb(ctx, NULL);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL); /* `asked` ends with this call */
    if (!key_ok && asked) {
        ERR_clear_error();
        snprintf(err, errlen,
                 "--tls-private-key-file %s: the key is encrypted with a passphrase, which is not "
                 "supported; give it unencrypted (e.g. openssl pkey -in %s -out PLAIN.key)",
                 key_file, key_file);
        return KS_EINVAL;
    }
    /* OpenSSL 3 already compares the key with the certificate while loading it. */
    int mismatch = !key_ok && ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH;
    if (!key_ok && !mismatch) {
        snprintf(err, errlen,
                 "--tls-private-key-file %s: cannot read a PEM private key from it (%s)", key_file,
                 ssl_reason(why, sizeof why, "unreadable"));
        return KS_EINVAL;
    }
    if (mismatch || SSL_CTX_check_private_key(ctx) != 1) {
        snprintf(
            err, errlen,
            "--tls-private-key-file %s does not match the certificate in --tls-cert-file %s (%s)",
            key_file, cert_file, ssl_reason(why, sizeof why, "key mismatch"));
        return KS_EINVAL;
    }
    return 0;
}

/* What bio holds, as a NUL-terminated string; NULL when out of memory. */
static char *bio_text(BIO *bio)
{
    char *data = NULL;
    long n = BIO_get_mem_data(bio, &data);
    char *out = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (out) {
        memcpy(out, data, (size_t)n);
        out[n] = '\0';
    }
    return out;
}

/* The checked identity in ctx as PEM text: the leaf, its chain, and the key (unencrypted: it is
 * only handed to the TLS library in memory). */
static int export_pem(SSL_CTX *ctx, ks_tls_ctx *out, char *err, size_t errlen)
{
    BIO *cb = BIO_new(BIO_s_mem()), *kb = BIO_new(BIO_s_mem());
    STACK_OF(X509) *chain = NULL;
    int ok = cb && kb && PEM_write_bio_X509(cb, SSL_CTX_get0_certificate(ctx)) == 1 &&
             SSL_CTX_get0_chain_certs(ctx, &chain) == 1;
    for (int i = 0; ok && chain && i < sk_X509_num(chain); i++)
        ok = PEM_write_bio_X509(cb, sk_X509_value(chain, i)) == 1;
    ok = ok &&
         PEM_write_bio_PrivateKey(kb, SSL_CTX_get0_privatekey(ctx), NULL, NULL, 0, NULL, NULL) == 1;
    if (ok) {
        out->cert_pem = bio_text(cb);
        out->key_pem = bio_text(kb);
        ok = out->cert_pem && out->key_pem;
    }
    BIO_free(cb);
    BIO_free(kb);
    ERR_clear_error();
    if (!ok) {
        snprintf(err, errlen, "out of memory keeping the serving certificate and key");
        return KS_ENOMEM;
    }
    return 0;
}

int ks__tls_ctx_create(const char *cert_file, const char *key_file, ks_tls_ctx **out, char *err,
                       size_t errlen)
{
    *out = NULL;
    int have_cert = cert_file && *cert_file, have_key = key_file && *key_file;
    if (have_cert != have_key) {
        snprintf(err, errlen,
                 "--tls-cert-file and --tls-private-key-file go together: %s is missing",
                 have_cert ? "--tls-private-key-file" : "--tls-cert-file");
        return KS_EINVAL;
    }
    /* OpenSSL reads and checks the files (or makes the pair); the server's TLS is GnuTLS. */
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    ks_tls_ctx *t = calloc(1, sizeof *t);
    if (!ctx || !t) {
        SSL_CTX_free(ctx);
        free(t);
        snprintf(err, errlen, "out of memory creating the TLS context");
        return KS_ENOMEM;
    }
    int rc = have_cert ? from_files(ctx, cert_file, key_file, err, errlen)
                       : self_signed(ctx, err, errlen);
    if (rc == 0)
        rc = export_pem(ctx, t, err, errlen);
    SSL_CTX_free(ctx);
    if (rc != 0) {
        ks__tls_ctx_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void ks__tls_ctx_free(ks_tls_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->key_pem) /* key material: cleared before it goes back to the allocator */
        OPENSSL_cleanse(ctx->key_pem, strlen(ctx->key_pem));
    free(ctx->cert_pem);
    free(ctx->key_pem);
    free(ctx);
}

int ks__tls_read_client_ca(const char *file, char **pem, char *err, size_t errlen)
{
    char why[256];
    *pem = NULL;
    BIO *in = BIO_new_file(file, "r"), *out = BIO_new(BIO_s_mem());
    int n = 0, rc = KS_EINVAL;
    if (!out) {
        snprintf(err, errlen, "out of memory reading --client-ca-file %s", file);
        rc = KS_ENOMEM;
        goto done;
    }
    if (!in) {
        snprintf(err, errlen, "--client-ca-file %s: cannot open it (%s)", file,
                 ssl_reason(why, sizeof why, "unreadable"));
        goto done;
    }
    for (X509 *x; (x = PEM_read_bio_X509(in, NULL, NULL, NULL)); X509_free(x))
        if (PEM_write_bio_X509(out, x) == 1)
            n++;
    ERR_clear_error(); /* the end of the file reads as an error */
    if (n == 0) {
        snprintf(err, errlen,
                 "--client-ca-file %s: no PEM certificate in it; give the CA certificates that "
                 "sign the clients' certificates",
                 file);
        goto done;
    }
    if (!(*pem = bio_text(out))) {
        snprintf(err, errlen, "out of memory reading --client-ca-file %s", file);
        rc = KS_ENOMEM;
        goto done;
    }
    rc = 0;
done:
    BIO_free(in);
    BIO_free(out);
    return rc;
}

const char *ks__tls_cert_pem(const ks_tls_ctx *ctx) { return ctx->cert_pem; }
const char *ks__tls_key_pem(const ks_tls_ctx *ctx) { return ctx->key_pem; }
