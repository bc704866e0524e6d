/* cs_text_escape, cs_text_json, cs_text_utf8 (calscope/text.h): every byte a terminal could take as a control comes out as
 * \xNN, printable UTF-8 and backslashes are kept, and a full buffer never cuts an escape or a
 * character; JSON and CSV strings take a stray byte as its Latin-1 character. Expected strings
 * written by hand from the rules. */
#include <stdio.h>
#include <string.h>

#include "calscope/text.h"
#include "support/cs_test.h"

static const char *esc(const char *s, size_t len, unsigned flags)
{
    static char buf[256];
    size_t n = cs_text_escape(buf, sizeof buf, s, len, flags);
    assert_int_equal(n, strlen(buf));
    return buf;
}
#define ESC(lit) esc(lit, sizeof lit - 1, 0)

static void controls_are_escaped(void **state)
{
    (void)state;
    assert_string_equal(ESC("a\x1b[31mb.csv"), "a\\x1b[31mb.csv");
    assert_string_equal(ESC("\x01\x7f\t"), "\\x01\\x7f\\x09");
    assert_string_equal(ESC("x\ny"), "x\\x0ay");
    assert_string_equal(esc("x\ny", 3, CS_TEXT_KEEP_NEWLINES), "x\ny");
    assert_string_equal(esc("x\ty", 3, CS_TEXT_KEEP_NEWLINES), "x\\x09y");
    /* C1 controls in UTF-8 (U+009B is CSI) */
    assert_string_equal(ESC("\xc2\x9b" "2J"), "\\xc2\\x9b2J");
    assert_string_equal(ESC("\xc2\x80"), "\\xc2\\x80");
}

static void printable_utf8_is_kept(void **state)
{
    (void)state;
    assert_string_equal(ESC("caf\xc3\xa9 \xc2\xa0|\xcf\x83|\xe2\x96\xb2|\xf0\x9f\x98\x80"),
                        "caf\xc3\xa9 \xc2\xa0|\xcf\x83|\xe2\x96\xb2|\xf0\x9f\x98\x80");
    assert_string_equal(ESC("a\\x1b"), "a\\x1b");            /* a backslash stays as typed */
    assert_string_equal(ESC(""), "");
}

static void invalid_utf8_is_escaped_byte_by_byte(void **state)
{
    (void)state;
    assert_string_equal(ESC("\xe9t\xe9"), "\\xe9t\\xe9");          /* Latin-1 */
    assert_string_equal(ESC("\x9b"), "\\x9b");                    /* 8-bit CSI */
    assert_string_equal(ESC("\xc0\xaf"), "\\xc0\\xaf");           /* overlong '/' */
    assert_string_equal(ESC("\xed\xa0\x80"), "\\xed\\xa0\\x80");  /* a surrogate */
    assert_string_equal(ESC("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); /* above U+10FFFF */
    assert_string_equal(ESC("\xe2\x96"), "\\xe2\\x96");           /* cut short */
    assert_string_equal(ESC("\xff"), "\\xff");
}

static void a_full_buffer_cuts_between_units(void **state)
{
    (void)state;
    char buf[8];
    assert_int_equal(cs_text_escape(buf, sizeof buf, "ab\x1b\x1b", 4, 0), 6);
    assert_string_equal(buf, "ab\\x1b");                /* the second escape does not fit */
    assert_int_equal(cs_text_escape(buf, 5, "ab\xc3\xa9\xc3\xa9", 6, 0), 4);
    assert_string_equal(buf, "ab\xc3\xa9");
    assert_int_equal(cs_text_escape(buf, 1, "abc", 3, 0), 0);
    assert_string_equal(buf, "");
}

/* cs_text_json / cs_text_utf8 into a string (open_memstream is POSIX; a tmpfile keeps C11). */
static const char *machine(int json, const char *s, size_t len)
{
    static char buf[256];
    FILE *f = tmpfile();
    assert_non_null(f);
    if (json) cs_text_json(f, s);
    else cs_text_utf8(f, s, len);
    long n = ftell(f);
    rewind(f);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}
#define JSON(lit) machine(1, lit, sizeof lit - 1)
#define UTF8(lit) machine(0, lit, sizeof lit - 1)

/* JSON: a stray byte is \u00XX (its Latin-1 character), valid UTF-8 (C1 controls and
 * four-byte characters too) is kept, the controls JSON forbids are escaped. */
static void json_strings_follow_the_latin1_rule(void **state)
{
    (void)state;
    assert_string_equal(JSON("a\xff" "b"), "\"a\\u00ffb\"");
    assert_string_equal(JSON("caf\xe9 \xc3\xa9"), "\"caf\\u00e9 \xc3\xa9\"");
    assert_string_equal(JSON("\xc3(\xed\xa0\x80"), "\"\\u00c3(\\u00ed\\u00a0\\u0080\"");   /* cut; surrogate */
    assert_string_equal(JSON("\xc2\x9b\xf0\x9f\x98\x80"), "\"\xc2\x9b\xf0\x9f\x98\x80\"");
    assert_string_equal(JSON("q\"b\\\n\r\t\x01\x7f"), "\"q\\\"b\\\\\\n\\r\\t\\u0001\\u007f\"");
    /* CSV's side of the rule: the same characters in UTF-8 */
    assert_string_equal(UTF8("a\xff" "b\xe9\xc3\xa9"), "a\xc3\xbf" "b\xc3\xa9\xc3\xa9");
    assert_string_equal(UTF8("\x80\x01"), "\xc2\x80\x01");
}

/* cs_load_excerpt: a message's quote shows what a reader cannot see — controls as \xNN, the
 * invisible or space-like characters as \uXXXX — and keeps every other character. */
static const char *excerpt(const char *s, size_t len)
{
    static char buf[256];
    cs_load_excerpt(buf, sizeof buf, s, len);
    return buf;
}
#define EXC(lit) excerpt(lit, sizeof lit - 1)

static void excerpts_show_what_cannot_be_seen(void **state)
{
    (void)state;
    assert_string_equal(EXC("\xef\xbb\xbf" "1"), "\\ufeff1");                   /* byte-order mark */
    assert_string_equal(EXC(" \xc2\xa0" "0.8"), " \\u00a00.8");                  /* no-break space */
    assert_string_equal(EXC("a\xc2\xad" "b"), "a\\u00adb");                     /* soft hyphen */
    assert_string_equal(EXC("a\xe2\x80\x8b" "b\xe2\x80\x8f" "c"), "a\\u200bb\\u200fc");
    assert_string_equal(EXC("\xe2\x80\xa8\xe2\x80\xae\xe2\x81\xa0"), "\\u2028\\u202e\\u2060");
    assert_string_equal(EXC("\xe2\x80\x80\xe2\x80\x89\xe2\x80\xaf\xe2\x81\x9f\xe3\x80\x80"),   /* spaces */
                        "\\u2000\\u2009\\u202f\\u205f\\u3000");
    assert_string_equal(EXC("x\x01y"), "x\\x01y");
    /* visible neighbours of the escaped ranges stay as written */
    assert_string_equal(EXC("\xc2\xa1\xe2\x80\x90\xe2\x80\xa7\xe2\x80\xb0\xe2\x81\x9e\xe2\x81\xa5\xe3\x80\x81\xef\xbb\xbe"),
                        "\xc2\xa1\xe2\x80\x90\xe2\x80\xa7\xe2\x80\xb0\xe2\x81\x9e\xe2\x81\xa5\xe3\x80\x81\xef\xbb\xbe");
    assert_string_equal(EXC("caf\xc3\xa9"), "caf\xc3\xa9");
    /* a sequence cut at the end of the text is not read past it */
    assert_string_equal(excerpt("a\xe2\x80", 3), "a\xe2\x80");
}

/* cs_text_count: digits grouped by threes from the right. */
static void counts_are_grouped_by_threes(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(cs_text_count(buf, sizeof buf, 0), "0");
    assert_string_equal(cs_text_count(buf, sizeof buf, 999), "999");
    assert_string_equal(cs_text_count(buf, sizeof buf, 1000), "1,000");
    assert_string_equal(cs_text_count(buf, sizeof buf, 1234567), "1,234,567");
    assert_string_equal(cs_text_count(buf, sizeof buf, 123456), "123,456");
    assert_string_equal(cs_text_count(buf, 27, 18446744073709551615ull), "18,446,744,073,709,551,615");
    assert_string_equal(cs_text_count(buf, 4, 1234567), "1,2");   /* cut, terminated */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(controls_are_escaped),
        cmocka_unit_test(printable_utf8_is_kept),
        cmocka_unit_test(invalid_utf8_is_escaped_byte_by_byte),
        cmocka_unit_test(a_full_buffer_cuts_between_units),
        cmocka_unit_test(json_strings_follow_the_latin1_rule),
        cmocka_unit_test(excerpts_show_what_cannot_be_seen),
        cmocka_unit_test(counts_are_grouped_by_threes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
