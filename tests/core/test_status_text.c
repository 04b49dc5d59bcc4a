/*
 * A status's reasons as text (framework.c ks__status_add): made valid UTF-8 as Go's
 * strings.ToValidUTF8(s, "\uFFFD") does, and a reason cut at the buffer's end marked
 * "…(truncated)" on a character boundary; a NULL reason marks the status.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "sched/framework.h"

#define FFFD "\xef\xbf\xbd"

static const char *added(ks_status *st, const char *reason)
{
    ks__status_reset(st);
    ks__status_add(st, reason);
    return ks__status_next(st, NULL);
}

Test(status_text, valid_utf8_is_copied_unchanged)
{
    ks_status st;
    const char *s = "plain, caf\xc3\xa9, \xe2\x82\xac, \xf0\x9f\x98\x80, \xef\xbf\xbf";
    cr_assert_str_eq(added(&st, s), s);
    cr_assert_eq(st.nreasons, 1);
}

Test(status_text, each_run_of_invalid_bytes_becomes_one_replacement)
{
    ks_status st;
    cr_assert_str_eq(added(&st, "a\xff\xfe"
                                "b"),
                     "a" FFFD "b");
    cr_assert_str_eq(added(&st, "cut \xe2\x82"), "cut " FFFD);
    cr_assert_str_eq(added(&st, "\x80x\x80"), FFFD "x" FFFD);
    /* overlong forms, surrogates and code points past U+10FFFF are invalid, as in Go */
    cr_assert_str_eq(added(&st, "\xc0\xaf"), FFFD);
    cr_assert_str_eq(added(&st, "\xe0\x80\xaf"), FFFD);
    cr_assert_str_eq(added(&st, "\xed\xa0\x80"), FFFD);
    cr_assert_str_eq(added(&st, "\xf4\x90\x80\x80"), FFFD);
    cr_assert_str_eq(added(&st, "\xf5\x80\x80\x80"), FFFD);
}

Test(status_text, a_cut_reason_ends_with_a_visible_mark_on_a_character_boundary)
{
    ks_status st;
    char longr[2 * KS_STATUS_BUF];
    /* 'é' (2 bytes) repeated: the cut must not split one */
    for (size_t i = 0; i + 2 < sizeof(longr); i += 2)
        memcpy(longr + i, "\xc3\xa9", 2);
    longr[sizeof(longr) - 2] = '\0';
    const char *r = added(&st, longr);
    size_t n = strlen(r);
    const char *mark = "\xe2\x80\xa6(truncated)";
    cr_assert(n < KS_STATUS_BUF && n > KS_STATUS_BUF - 20, "length %zu", n);
    cr_assert_str_eq(r + n - strlen(mark), mark);
    cr_assert_eq((unsigned char)r[n - strlen(mark) - 2], 0xc3, "cut inside a character");
    /* a reason that fits is not marked */
    cr_assert_null(strstr(added(&st, "short"), "truncated"));
}

Test(status_text, null_reason_adds_nothing_and_marks_the_status)
{
    ks_status st;
    ks__status_reset(&st);
    ks__status_add(&st, NULL);
    cr_assert_eq(st.nreasons, 0);
    cr_assert_eq(st.null_reason, 1);
    ks__status_reset(&st);
    cr_assert_eq(st.null_reason, 0);
}
