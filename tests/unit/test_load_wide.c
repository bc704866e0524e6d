/* Wide headers and the one-block class names (a header of 100,000 classes costs nothing per class).
 *
 *  - a 100,000-column header loads through the libcsv path and the fast path (1 and 3 threads)
 *    with every class name, column and value right and the two datasets identical; the same
 *    with names that switch from numbers at their own position to text half way (the class
 *    map's tables appear mid-header) and with logits;
 *  - class names survive the copies other datasets are made by (cs_dataset_subset, a
 *    recalibrated "FILE+ts" dataset) after the original is freed — run under ASan, a name
 *    still pointing into the freed block is a use after free;
 *  - cs_names_pack keeps NULL names and empty ones, and a block is freed with one free();
 *  - the class map over a borrowed array: duplicates, `#N`, numbers out of order after numbers
 *    in order, and a full array.
 * Timing lives in `make bench` (bench_engine -c wide_header), not here. */
#include "support/cs_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/classes.h"
#include "calscope/load.h"
#include "calscope/recal.h"
#include "engine/load/load_internal.h"

enum { WIDE_K = 100000 };

/* "label,<prefix><name 0>,...\n" then `rows` rows: label r % k, the row one-hot on r % k
 * (logits: 5 on it, 0 elsewhere). name(j) writes class j's name. */
static char *wide_csv(size_t k, size_t rows, const char *prefix, int logits,
                      void (*name)(size_t j, char *buf, size_t cap), size_t *len)
{
    size_t cap = 64 + k * (strlen(prefix) + 24) + rows * (24 + 2 * k), o = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    o += (size_t)snprintf(b + o, cap - o, "label");
    for (size_t j = 0; j < k; j++) {
        char nm[24];
        name(j, nm, sizeof nm);
        o += (size_t)snprintf(b + o, cap - o, ",%s%s", prefix, nm);
    }
    b[o++] = '\n';
    for (size_t r = 0; r < rows; r++) {
        o += (size_t)snprintf(b + o, cap - o, "%zu", r % k);
        for (size_t j = 0; j < k; j++)
            o += (size_t)snprintf(b + o, cap - o, ",%s", j == r % k ? (logits ? "5" : "1") : "0");
        b[o++] = '\n';
    }
    assert_true(o < cap);
    *len = o;
    return b;
}

static void name_number(size_t j, char *buf, size_t cap) { snprintf(buf, cap, "%zu", j); }

/* numbers at their own position for the first half, then text: c<j> */
static void name_mixed(size_t j, char *buf, size_t cap)
{
    if (j < WIDE_K / 2) snprintf(buf, cap, "%zu", j);
    else snprintf(buf, cap, "c%zu", j);
}

static cs_dataset *load_path(const char *text, size_t len, int path, int threads)
{
    cs_load_options opt;
    cs_load_options_default(&opt);
    cs_load_tuning t = {path, 0, threads, 0, 0, 0};
    cs_error err;
    cs_dataset *d = cs_load_buffer_tuned("wide.csv", text, len, &opt, NULL, &err, &t);
    if (!d) fail_msg("load failed: %s", err.msg);
    assert_int_equal(t.used_path, path);
    return d;
}

static void assert_same(const cs_dataset *a, const cs_dataset *b)
{
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->k, b->k);
    assert_memory_equal(a->prob, b->prob, a->n * a->k * sizeof *a->prob);
    assert_memory_equal(a->label, b->label, a->n * sizeof *a->label);
    assert_memory_equal(a->class_col, b->class_col, a->k * sizeof *a->class_col);
    assert_int_equal(a->logit == NULL, b->logit == NULL);
    if (a->logit) assert_memory_equal(a->logit, b->logit, a->n * a->k * sizeof *a->logit);
    for (size_t j = 0; j < a->k; j++) assert_string_equal(a->class_names[j], b->class_names[j]);
}

/* Every name, column and one-hot value of a dataset loaded from wide_csv. */
static void check_wide(const cs_dataset *d, size_t k, size_t rows,
                       void (*name)(size_t j, char *buf, size_t cap))
{
    assert_int_equal(d->k, k);
    assert_int_equal(d->n, rows);
    for (size_t j = 0; j < k; j++) {
        char nm[24];
        name(j, nm, sizeof nm);
        if (strcmp(d->class_names[j], nm) != 0)
            fail_msg("class %zu named '%s', want '%s'", j, d->class_names[j], nm);
        assert_int_equal(d->class_col[j], j + 2);          /* label is column 1 */
    }
    for (size_t r = 0; r < rows; r++) {
        assert_int_equal(d->label[r], (int32_t)(r % k));
        assert_int_equal(d->pred[r], (int32_t)(r % k));
    }
}

static void test_wide_header_both_paths(void **state)
{
    (void)state;
    size_t len;
    char *text = wide_csv(WIDE_K, 3, "p_", 0, name_number, &len);
    cs_dataset *c = load_path(text, len, CSL_PATH_CSV, 0);
    check_wide(c, WIDE_K, 3, name_number);
    for (size_t r = 0; r < 3; r++)
        for (size_t j = 0; j < WIDE_K; j++)
            assert_true(c->prob[r * WIDE_K + j] == (j == r ? 1.0 : 0.0));
    for (int threads = 1; threads <= 3; threads += 2) {
        cs_dataset *f = load_path(text, len, CSL_PATH_FAST, threads);
        assert_same(c, f);
        cs_dataset_free(f);
    }
    /* names are found by the class rule: numbers name their own class, `#N` a position */
    assert_int_equal(cs_dataset_class_index(c, "99999"), 99999);
    assert_int_equal(cs_dataset_class_index(c, "#123"), 123);
    assert_int_equal(cs_dataset_class_index(c, "100000"), -1);
    cs_dataset_free(c);
    free(text);
}

static void test_wide_header_mixed_names_and_logits(void **state)
{
    (void)state;
    size_t len;
    char *text = wide_csv(WIDE_K, 2, "logit_", 1, name_mixed, &len);
    cs_dataset *c = load_path(text, len, CSL_PATH_CSV, 0);
    check_wide(c, WIDE_K, 2, name_mixed);
    assert_non_null(c->logit);
    assert_true(c->logit[0] == 5.0 && c->logit[1] == 0.0);
    cs_dataset *f = load_path(text, len, CSL_PATH_FAST, 1);
    assert_same(c, f);
    cs_dataset_free(f);
    assert_int_equal(cs_dataset_class_index(c, "C77777"), 77777);   /* text: any case */
    assert_int_equal(cs_dataset_class_index(c, "49999"), 49999);
    cs_dataset_free(c);
    free(text);
}

/* A duplicate class far into a wide header is refused with both columns named. */
static void test_wide_header_duplicate(void **state)
{
    (void)state;
    size_t len;
    char *text = wide_csv(WIDE_K, 1, "p_", 0, name_number, &len);
    /* rename the last class column p_99999 to p_00007: the same number as column 9 (p_7) */
    char *last = strstr(text, ",p_99999\n");
    assert_non_null(last);
    memcpy(last + 3, "00007", 5);
    for (int path = CSL_PATH_CSV; path <= CSL_PATH_FAST; path++) {
        cs_load_options opt;
        cs_load_options_default(&opt);
        cs_load_tuning t = {path, 0, 1, 0, 0, 0};
        cs_error err;
        assert_null(cs_load_buffer_tuned("wide.csv", text, len, &opt, NULL, &err, &t));
        assert_string_equal(err.msg, "wide.csv:1:100001: duplicate column 'p_00007' (class"
                                     " already given by column 9)");
    }
    free(text);
}

/* A header refused at a column, with the summary asked for: the summary reads only the names
 * of the columns read so far (the ones after the refused column were never copied). */
static void test_refused_header_summary(void **state)
{
    (void)state;
    static const char csv[] = "label,p_1,p_0,p_1,p_2\n1,0.5,0.5,0,0\n";
    for (int path = CSL_PATH_CSV; path <= CSL_PATH_FAST; path++) {
        cs_load_options opt;
        cs_load_options_default(&opt);
        cs_load_tuning t = {path, 0, 1, 0, 0, 0};
        cs_load_summary sum;
        cs_error err;
        assert_null(cs_load_buffer_tuned("d.csv", csv, sizeof csv - 1, &opt, &sum, &err, &t));
        assert_string_equal(err.msg, "d.csv:1:4: duplicate column 'p_1' (class already given by"
                                     " column 2)");
        if (sum.class_note)
            assert_non_null(strstr(sum.class_note, "(p_1, p_0, p_1)"));
        cs_load_summary_free(&sum);
    }
}

static void check_names(const cs_dataset *d, const char *const *want, size_t k)
{
    assert_int_equal(d->k, k);
    for (size_t j = 0; j < k; j++) assert_string_equal(d->class_names[j], want[j]);
}

/* A subset and a recalibration copy the class names into their own block: they stay readable
 * after the loaded dataset (whose block also holds the header) is freed. */
static void test_names_survive_copies(void **state)
{
    (void)state;
    static const char csv[] = "label,p_cat,p_dog,p_emu\n"
                              "cat,0.7,0.2,0.1\n"
                              "dog,0.1,0.8,0.1\n"
                              "emu,0.2,0.2,0.6\n"
                              "dog,0.3,0.6,0.1\n";
    static const char *const want[] = {"cat", "dog", "emu"};
    cs_load_options opt;
    cs_load_options_default(&opt);
    cs_error err;
    cs_dataset *d = cs_load_buffer("pets.csv", csv, sizeof csv - 1, &opt, NULL, &err);
    assert_non_null(d);
    check_names(d, want, 3);
    uint8_t mask[4] = {1, 0, 1, 0};
    cs_dataset *sub = cs_dataset_subset(d, mask, 1, "[odd]", NULL, &err);
    assert_non_null(sub);
    cs_recal_options ro;
    cs_recal_options_default(&ro);
    ro.folds = 2;
    cs_dataset *ts = cs_recal_apply(d, CS_RECAL_TS, &ro, NULL, &err);
    if (!ts) fail_msg("recal: %s", err.msg);
    cs_dataset_free(d);
    check_names(sub, want, 3);
    assert_int_equal(sub->n, 2);
    assert_int_equal(sub->label[0], 0);                     /* rows 1 and 3: cat, emu */
    assert_int_equal(sub->label[1], 2);
    assert_string_equal(sub->path, "pets.csv[odd]");
    check_names(ts, want, 3);
    assert_string_equal(ts->path, "pets.csv+ts");
    assert_int_equal(cs_dataset_class_index(ts, "EMU"), 2);
    cs_dataset_free(sub);
    cs_dataset_free(ts);
}

static void test_names_pack(void **state)
{
    (void)state;
    const char *names[] = {"alpha", NULL, "", "z"};
    char **b = cs_names_pack(names, 4);
    assert_non_null(b);
    assert_string_equal(b[0], "alpha");
    assert_null(b[1]);
    assert_string_equal(b[2], "");
    assert_string_equal(b[3], "z");
    /* copies, inside the block itself (after the pointers) */
    assert_true(b[0] != names[0]);
    assert_true((char *)b[0] >= (char *)(b + 4) && (char *)b[3] < (char *)(b + 4) + 10);
    free(b);
    char **none = cs_names_pack(names, 0);
    assert_non_null(none);
    free(none);
}

static void test_classmap_over_borrowed_array(void **state)
{
    (void)state;
    char *arr[4];
    char n0[] = "0", n1[] = "1", cat[] = "Cat", n7[] = "7", dup1[] = "1.0", hash[] = "#2";
    cs_classmap *m = cs_classmap_over(arr, 4);
    assert_non_null(m);
    arr[0] = n0;
    assert_int_equal(cs_classmap_add(m, n0), -1);
    arr[1] = n1;
    assert_int_equal(cs_classmap_add(m, n1), -1);
    assert_int_equal(cs_classmap_add(m, dup1), 1);       /* same number as class 1 */
    assert_int_equal(cs_classmap_add(m, hash), CS_CLASSMAP_HASH_NAME);
    assert_true(cs_classmap_numbers_are_positions(m));
    arr[2] = cat;                                          /* text: the map's tables begin */
    assert_int_equal(cs_classmap_add(m, cat), -1);
    arr[3] = n7;                                           /* a number not at its position */
    assert_int_equal(cs_classmap_add(m, n7), -1);
    assert_int_equal(cs_classmap_add_n(m, "CAT", 3), 2);  /* duplicates still found */
    assert_int_equal(cs_classmap_add_n(m, "x", 1), CS_CLASSMAP_NOMEM);   /* the array is full */
    assert_int_equal(cs_classmap_size(m), 4);
    assert_int_equal(cs_classmap_numbered(m), 3);
    assert_true(cs_classmap_out_of_order(m));
    int why = 0;
    assert_int_equal(cs_classmap_find(m, "cat", 3, &why), 2);
    assert_int_equal(cs_classmap_find(m, "7", 1, &why), 3);
    assert_int_equal(cs_classmap_find(m, "1", 1, &why), 1);
    assert_int_equal(cs_classmap_find(m, "0", 1, &why), 0);
    assert_int_equal(cs_classmap_find(m, "3", 1, &why), -1);
    assert_int_equal(why, CS_CLASS_AMBIGUOUS);
    char buf[64];
    assert_string_equal(cs_classmap_list(m, buf, sizeof buf), "0, 1, Cat, 7");
    cs_classmap_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wide_header_both_paths),
        cmocka_unit_test(test_wide_header_mixed_names_and_logits),
        cmocka_unit_test(test_wide_header_duplicate),
        cmocka_unit_test(test_refused_header_summary),
        cmocka_unit_test(test_names_survive_copies),
        cmocka_unit_test(test_names_pack),
        cmocka_unit_test(test_classmap_over_borrowed_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
