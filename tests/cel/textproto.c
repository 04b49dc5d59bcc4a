/* See textproto.h. */
#include "textproto.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct tp {
    const char *s;
    size_t p;
    int line;
    const char *err;
} tp;

static void skip(tp *t)
{
    for (;;) {
        char c = t->s[t->p];
        if (c == '\n') {
            t->line++;
            t->p++;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            t->p++;
        } else if (c == '#') {
            while (t->s[t->p] && t->s[t->p] != '\n')
                t->p++;
        } else {
            return;
        }
    }
}

static tp_node *new_node(void) { return calloc(1, sizeof(tp_node)); }

static void put_utf8(char *out, size_t *o, unsigned cp)
{
    if (cp < 0x80) {
        out[(*o)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*o)++] = (char)(0xC0 | (cp >> 6));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*o)++] = (char)(0xE0 | (cp >> 12));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*o)++] = (char)(0xF0 | (cp >> 18));
        out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    }
}

/* One or more adjacent quoted literals, decoded and concatenated. */
static bool read_string(tp *t, tp_node *n)
{
    size_t cap = 64, o = 0;
    char *out = malloc(cap);
    while (t->s[t->p] == '"' || t->s[t->p] == '\'') {
        char q = t->s[t->p++];
        while (t->s[t->p] && t->s[t->p] != q) {
            if (o + 8 >= cap) {
                cap *= 2;
                out = realloc(out, cap);
            }
            char c = t->s[t->p++];
            if (c == '\n') {
                t->err = "newline in string";
                free(out);
                return false;
            }
            if (c != '\\') {
                out[o++] = c;
                continue;
            }
            char e = t->s[t->p++];
            switch (e) {
            case 'n':
                out[o++] = '\n';
                break;
            case 't':
                out[o++] = '\t';
                break;
            case 'r':
                out[o++] = '\r';
                break;
            case 'a':
                out[o++] = '\a';
                break;
            case 'b':
                out[o++] = '\b';
                break;
            case 'f':
                out[o++] = '\f';
                break;
            case 'v':
                out[o++] = '\v';
                break;
            case '\\':
                out[o++] = '\\';
                break;
            case '\'':
                out[o++] = '\'';
                break;
            case '"':
                out[o++] = '"';
                break;
            case '?':
                out[o++] = '?';
                break;
            case 'x': {
                unsigned v = 0;
                int k = 0;
                while (k < 2 && isxdigit((unsigned char)t->s[t->p])) {
                    char h = t->s[t->p++];
                    v = v * 16 +
                        (unsigned)(isdigit((unsigned char)h) ? h - '0' : (tolower(h) - 'a' + 10));
                    k++;
                }
                out[o++] = (char)v;
                break;
            }
            case 'u':
            case 'U': {
                int nd = e == 'u' ? 4 : 8;
                unsigned v = 0;
                for (int k = 0; k < nd && isxdigit((unsigned char)t->s[t->p]); k++) {
                    char h = t->s[t->p++];
                    v = v * 16 +
                        (unsigned)(isdigit((unsigned char)h) ? h - '0' : (tolower(h) - 'a' + 10));
                }
                put_utf8(out, &o, v);
                break;
            }
            default:
                if (e >= '0' && e <= '7') {
                    unsigned v = (unsigned)(e - '0');
                    for (int k = 0; k < 2 && t->s[t->p] >= '0' && t->s[t->p] <= '7'; k++)
                        v = v * 8 + (unsigned)(t->s[t->p++] - '0');
                    out[o++] = (char)v;
                } else {
                    t->err = "unknown escape";
                    free(out);
                    return false;
                }
            }
        }
        if (t->s[t->p] != q) {
            t->err = "unterminated string";
            free(out);
            return false;
        }
        t->p++;
        skip(t);
    }
    out[o] = 0;
    n->str = out;
    n->len = o;
    n->is_string = true;
    return true;
}

static tp_node *parse_fields(tp *t, char close);

static bool parse_value(tp *t, tp_node *n)
{
    skip(t);
    char c = t->s[t->p];
    if (c == '{' || c == '<') {
        t->p++;
        n->is_msg = true;
        n->child = parse_fields(t, c == '{' ? '}' : '>');
        if (t->err)
            return false;
        t->p++;
        return true;
    }
    if (c == '"' || c == '\'')
        return read_string(t, n);
    size_t st = t->p;
    while (t->s[t->p] && (isalnum((unsigned char)t->s[t->p]) || strchr("_-+.", t->s[t->p])))
        t->p++;
    if (st == t->p) {
        t->err = "expected a value";
        return false;
    }
    n->len = t->p - st;
    n->str = malloc(n->len + 1);
    memcpy(n->str, t->s + st, n->len);
    n->str[n->len] = 0;
    return true;
}

static tp_node *parse_fields(tp *t, char close)
{
    tp_node *head = NULL, **tail = &head;
    for (;;) {
        skip(t);
        char c = t->s[t->p];
        if (c == close || c == 0) {
            if (c != close)
                t->err = "unexpected end";
            return head;
        }
        size_t st = t->p;
        if (c == '[') { /* extension or Any type URL */
            while (t->s[t->p] && t->s[t->p] != ']')
                t->p++;
            t->p++;
        } else {
            while (isalnum((unsigned char)t->s[t->p]) || t->s[t->p] == '_')
                t->p++;
        }
        if (st == t->p) {
            t->err = "expected a field name";
            return head;
        }
        char *name = malloc(t->p - st + 1);
        memcpy(name, t->s + st, t->p - st);
        name[t->p - st] = 0;
        skip(t);
        if (t->s[t->p] == ':') {
            t->p++;
            skip(t);
        }
        if (t->s[t->p] == '[') { /* a list of values: one field per element */
            t->p++;
            for (;;) {
                skip(t);
                if (t->s[t->p] == ']') {
                    t->p++;
                    break;
                }
                tp_node *n = new_node();
                n->name = strdup(name);
                n->line = t->line;
                *tail = n;
                tail = &n->next;
                if (!parse_value(t, n))
                    return head;
                skip(t);
                if (t->s[t->p] == ',')
                    t->p++;
            }
            free(name);
        } else {
            tp_node *n = new_node();
            n->name = name;
            n->line = t->line;
            *tail = n;
            tail = &n->next;
            if (!parse_value(t, n))
                return head;
        }
        skip(t);
        if (t->s[t->p] == ',' || t->s[t->p] == ';')
            t->p++;
    }
}

tp_node *tp_parse(const char *text, const char **err, int *line)
{
    tp t = {.s = text, .line = 1};
    tp_node *root = new_node();
    root->is_msg = true;
    root->name = strdup("");
    root->child = parse_fields(&t, 0);
    if (t.err && strcmp(t.err, "unexpected end") != 0) {
        *err = t.err;
        *line = t.line;
        tp_free(root);
        return NULL;
    }
    return root;
}

void tp_free(tp_node *n)
{
    while (n) {
        tp_node *next = n->next;
        tp_free(n->child);
        free((char *)n->name);
        free(n->str);
        free(n);
        n = next;
    }
}

const tp_node *tp_get(const tp_node *n, const char *name)
{
    for (const tp_node *c = n ? n->child : NULL; c; c = c->next)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}
