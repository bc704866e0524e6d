/* The dashboard's model (src/tui/model.h): results keyed by what they show.
 *   - a result is drawn with the dataset it was computed on: after switching to a file with
 *     fewer cases, the Cases place still holds the first file's job, marked stale, whose `data`
 *     is the first file (the view draws with it; before, the view indexed the second file's
 *     case names with it: SIGSEGV);
 *   - never "ready" beside a result still to come: a job finished but not yet collected keeps
 *     the status busy (before, for a frame, "ready" was drawn beside the stale numbers);
 *   - a settings change re-runs only what depends on it (--repeats: the curves, not the
 *     metrics), and going back to the kept setting needs no job at all;
 *   - a result kept for a key comes back at once when the key does, after other keys' results
 *     arrived in between (lens top1 -> full, computed -> top1: no job, not stale; before, only
 *     the latest result was kept, and the key held k also for top1, which the `l` key leaves
 *     at the topk lens's value: top1 was recomputed, shown `~stale` meanwhile);
 *   - leaving a view cancels its pending curves;
 *   - dropping files (--follow's Compare of epochs closing) drops their datasets and every
 *     result read from them, and a file added again at a dropped index loads afresh.
 * Real files through a real backend; every wait is for a state, with a liveness limit only. */
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "calscope/jobs/cases.h"
#include "calscope/jobs/metrics.h"
#include "support/cs_test.h"
#include "support/liveness.h"
#include "tui/actions.h"
#include "tui/model.h"
#include "tui/state.h"

static tui_state st;
static tui_model m;
static cs_backend *b;

/* Waits for a wake-up byte (a job was queued for delivery), without collecting. */
static void wait_wake(void)
{
    struct pollfd pfd = { .fd = cs_backend_wake_fd(b), .events = POLLIN };
    assert_int_equal(poll(&pfd, 1, CS_TEST_LIVENESS_MS), 1);
}

/* Collects until nothing is pending any more (every submitted job delivered). */
static void settle(void)
{
    char what[64];
    double p;
    while (tui_model_busy(&m, what, sizeof what, &p)) {
        wait_wake();
        tui_model_collect(&m, &st);
        tui_model_submit(&m, &st);
    }
}

static void open_files(const char *const *paths, size_t n)
{
    tui_state_init(&st);
    for (size_t i = 0; i < n; i++) st.paths[i] = paths[i];
    st.n_files = n;
    cs_load_options lo;
    cs_load_options_default(&lo);
    cs_error err;
    b = cs_backend_new(2, &err);
    assert_non_null(b);
    char msg[256];
    assert_int_equal(tui_model_init(&m, b, &st, &lo, msg, sizeof msg), 0);
    tui_model_submit(&m, &st);
    settle();
    for (size_t i = 0; i < n; i++) assert_int_equal(m.files[i].state, TUI_LOADED);
}

static void close_files(void)
{
    cs_backend_free(b);
    tui_model_free(&m);
}

/* A segmentation CSV of n_cases cases named PREFIXnnn, 30 pixels each, 3 classes. */
static const char *seg_file(const char *prefix, size_t n_cases)
{
    static char buf[1 << 20];
    size_t len = (size_t)snprintf(buf, sizeof buf, "case,label,p_bg,p_organ,p_lesion\n");
    for (size_t c = 0; c < n_cases; c++)
        for (size_t i = 0; i < 30; i++) {
            double a = 0.2 + 0.6 * (double)((c * 7 + i * 13) % 10) / 10.0, bb = (1 - a) / 2;
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%03zu,%zu,%.3f,%.3f,%.3f\n",
                                    prefix, c, (c + i) % 3, a, bb, 1 - a - bb);
        }
    return cs_test_tmpfile(".csv", buf, len);
}

static void test_result_keeps_its_dataset(void **state)
{
    (void)state;
    const char *paths[2] = { seg_file("many", 40), seg_file("one", 1) };
    open_files(paths, 2);
    st.view = TUI_VIEW_CASES;
    tui_model_submit(&m, &st);
    settle();
    int stale = -1;
    const cs_job *r = tui_model_result(&m, TUI_SLOT_CASES, &stale);
    assert_non_null(r);
    assert_int_equal(stale, 0);
    const cs_cases_job *cj = cs_cases_job_of(r);
    assert_ptr_equal(cj->data, m.files[0].data);
    assert_int_equal(cj->result.n_cases, 40);

    /* `f`: the second file (one case) is active; its job is submitted, the first file's result
     * is still the place's — stale, and naming the dataset it belongs to */
    st.active = 1;
    assert_true(tui_model_submit(&m, &st) >= 1);
    r = tui_model_result(&m, TUI_SLOT_CASES, &stale);
    assert_non_null(r);
    assert_int_equal(stale, 1);
    cj = cs_cases_job_of(r);
    assert_ptr_equal(cj->data, m.files[0].data);
    assert_true(cj->result.n_cases > m.files[1].data->n_cases);   /* the old crash's indices */
    for (size_t i = 0; i < cj->result.n_cases; i++)
        assert_true((size_t)cj->result.case_index[i] < cj->data->n_cases);
    settle();
    r = tui_model_result(&m, TUI_SLOT_CASES, &stale);
    assert_int_equal(stale, 0);
    assert_ptr_equal(cs_cases_job_of(r)->data, m.files[1].data);
    assert_int_equal(cs_cases_job_of(r)->result.n_cases, 1);
    close_files();
}

static void test_keep_files_drops_and_adds_again(void **state)
{
    (void)state;
    const char *a = seg_file("a", 2), *b3 = seg_file("b", 3), *c4 = seg_file("c", 4), *d5 = seg_file("d", 5);
    const char *paths[1] = { a };
    open_files(paths, 1);
    cs_load_options lo;
    cs_load_options_default(&lo);
    assert_int_equal(tui_model_replace_file(&m, &st, 1, b3, &lo), 0);
    assert_int_equal(tui_model_replace_file(&m, &st, 2, c4, &lo), 0);
    st.n_files = 3;
    st.view = TUI_VIEW_COMPARE;
    tui_model_submit(&m, &st);
    settle();
    assert_int_equal(m.n_files, 3);
    assert_int_equal(m.files[2].data->n_cases, 4);
    assert_non_null(m.places[TUI_SLOT_METRICS(1)].resp);   /* the Compare view measured file 1 */

    tui_model_keep_files(&m, 1);
    st.n_files = 1;
    assert_int_equal(m.n_files, 1);
    assert_null(m.files[1].data);
    assert_null(m.files[2].data);
    assert_null(m.places[TUI_SLOT_METRICS(1)].resp);       /* read from a dropped file */
    assert_null(m.places[TUI_SLOT_METRICS(2)].resp);
    tui_model_submit(&m, &st);
    settle();
    assert_int_equal(m.files[0].state, TUI_LOADED);

    /* added again at index 1: another file, loaded afresh */
    assert_int_equal(tui_model_replace_file(&m, &st, 1, d5, &lo), 0);
    st.n_files = 2;
    tui_model_submit(&m, &st);
    settle();
    assert_int_equal(m.n_files, 2);
    assert_int_equal(m.files[1].state, TUI_LOADED);
    assert_int_equal(m.files[1].data->n_cases, 5);
    close_files();
}

static void test_busy_until_collected(void **state)
{
    (void)state;
    const char *paths[1] = { cs_test_sample("breast_cancer_gnb.csv") };
    open_files(paths, 1);
    char what[64];
    double p;
    assert_int_equal(tui_model_busy(&m, what, sizeof what, &p), 0);
    st.settings.bins = 20;
    assert_int_equal(tui_model_submit(&m, &st), 1);
    wait_wake();                            /* finished, on the backend's done list */
    assert_false(cs_backend_busy(b, TUI_SLOT_METRICS(0)));
    int stale = -1;
    assert_non_null(tui_model_result(&m, TUI_SLOT_METRICS(0), &stale));
    assert_int_equal(stale, 1);             /* the numbers drawn now are the old ones... */
    assert_int_equal(tui_model_busy(&m, what, sizeof what, &p), 1);   /* ...so: not "ready" */
    assert_string_equal(what, "metrics");
    tui_model_collect(&m, &st);
    assert_int_equal(tui_model_busy(&m, what, sizeof what, &p), 0);
    const cs_job *r = tui_model_result(&m, TUI_SLOT_METRICS(0), &stale);
    assert_int_equal(stale, 0);
    assert_int_equal(cs_metrics_job_of(r)->result.n_bins, 20);
    close_files();
}

static void test_only_what_depends_on_a_change(void **state)
{
    (void)state;
    const char *paths[2] = { cs_test_sample("digits_gnb.csv"), cs_test_sample("digits_ts.csv") };
    open_files(paths, 2);
    st.view = TUI_VIEW_VARIANCE;
    st.repeats = 3;
    tui_model_submit(&m, &st);
    settle();
    const cs_job *metrics0 = tui_model_result(&m, TUI_SLOT_METRICS(0), &(int){ 0 });
    const cs_job *metrics1 = tui_model_result(&m, TUI_SLOT_METRICS(1), &(int){ 0 });
    assert_non_null(metrics0);
    assert_non_null(metrics1);

    /* --repeats (the r key): the two curves again, no file's metrics */
    st.repeats = 4;
    assert_int_equal(tui_model_submit(&m, &st), 2);
    assert_true(cs_backend_busy(b, TUI_SLOT_SIZE) || cs_backend_progress(b, TUI_SLOT_SIZE) == 1);
    assert_false(m.places[TUI_SLOT_METRICS(0)].pending);
    assert_false(m.places[TUI_SLOT_METRICS(1)].pending);
    settle();
    int stale = -1;
    assert_ptr_equal(tui_model_result(&m, TUI_SLOT_METRICS(0), &stale), metrics0);   /* kept */
    assert_int_equal(stale, 0);
    assert_ptr_equal(tui_model_result(&m, TUI_SLOT_METRICS(1), &stale), metrics1);

    /* a metric setting and back before anything ran: the kept results are current again and
     * nothing is left pending */
    st.settings.bins = 16;
    assert_int_equal(tui_model_submit(&m, &st), 4);   /* 2 files' metrics, 2 curves */
    st.settings.bins = 15;
    assert_int_equal(tui_model_submit(&m, &st), 0);
    assert_ptr_equal(tui_model_result(&m, TUI_SLOT_METRICS(0), &stale), metrics0);
    assert_int_equal(stale, 0);
    char what[64];
    double p;
    assert_int_equal(tui_model_busy(&m, what, sizeof what, &p), 0);
    close_files();
}

/* Every field of cs_settings, its place in the struct and one change of it. */
typedef struct setting_field {
    const char *name;
    size_t offset, size, align;
} setting_field;

#define SETTING(f, type) { #f, offsetof(cs_settings, f), sizeof(((cs_settings *)0)->f), _Alignof(type) }
static const setting_field setting_fields[] = {
    SETTING(lens, cs_lens_kind),   SETTING(topk, int),           SETTING(lens_arg, char),
    SETTING(binning, cs_binning),  SETTING(bins, int),           SETTING(gamma, double),
    SETTING(sigma, double),        SETTING(distance, cs_distance),
    SETTING(interval_lo, double),  SETTING(interval_hi, double), SETTING(mixture, cs_mixture),
    SETTING(smece_sigma, double),  SETTING(select, char),        SETTING(boot_size, long),
};
#define N_SETTING_FIELDS (sizeof setting_fields / sizeof setting_fields[0])

/* Every field changed from the defaults, by position: a field added to cs_settings and not here
 * is a missing initializer, which -Wextra -Werror refuses at build time. */
static const cs_settings changed = {
    CS_LENS_CLASSWISE, 2, "1", CS_BIN_MASS, 20, 0.2, 0.2, CS_DIST_L2, 0.1, 0.9, CS_MIX_GMM3,
    0.05, "conf > 0.5", 40000,
};

/* s with field i of setting_fields taken from `changed`. */
static void change_setting(cs_settings *s, size_t i)
{
    const setting_field *f = &setting_fields[i];
    memcpy((char *)s + f->offset, (const char *)&changed + f->offset, f->size);
    /* k is a setting of the topk lens only, the lens argument of class: and group: only (the
     * key holds them there, so a result kept for top1 is not missed after a round of `l`) */
    if (strcmp(f->name, "topk") == 0) s->lens = CS_LENS_TOPK;
    if (strcmp(f->name, "lens_arg") == 0) s->lens = CS_LENS_CLASS;
}

/* The table above is cs_settings, field for field: in offset order, each field where its
 * alignment puts it after the previous one, and the struct ending after the last (with
 * `changed`, which names every field by position, no field is left out of the loop below). */
static void test_setting_fields_cover_the_settings(void **state)
{
    (void)state;
    size_t end = 0;
    for (size_t i = 0; i < N_SETTING_FIELDS; i++) {
        const setting_field *f = &setting_fields[i];
        size_t want = (end + f->align - 1) / f->align * f->align;
        if (f->offset != want)
            fail_msg("cs_settings has a field between byte %zu and %s (at %zu): add it to "
                     "setting_fields and to the model's key", end, f->name, f->offset);
        end = f->offset + f->size;
    }
    size_t align = _Alignof(cs_settings);
    assert_int_equal(sizeof(cs_settings), (end + align - 1) / align * align);
}

/* A change of any one setting makes the file's metrics a new result (each field is in the
 * model's key), and going back to the kept settings needs no job. */
static void test_every_setting_is_in_the_key(void **state)
{
    (void)state;
    const char *paths[1] = { cs_test_sample("digits_gnb.csv") };
    open_files(paths, 1);
    const cs_settings kept = st.settings;
    for (size_t i = 0; i < N_SETTING_FIELDS; i++) {
        change_setting(&st.settings, i);
        assert_memory_not_equal(&st.settings, &kept, sizeof kept);
        if (tui_model_submit(&m, &st) < 1 || !m.places[TUI_SLOT_METRICS(0)].pending)
            fail_msg("a change of %s asked for no new metrics: it is not in the model's key",
                     setting_fields[i].name);
        st.settings = kept;
        assert_int_equal(tui_model_submit(&m, &st), 0);
        assert_false(m.places[TUI_SLOT_METRICS(0)].pending);
        settle();
    }
    close_files();
}

/* top1 -> full (its result arrives) -> top1: the top1 result is served from the kept ones, with
 * no job submitted and nothing pending; so is full's after it, and every lens of a whole round
 * of the `l` key (which leaves k at the topk lens's value on top1). */
static void test_kept_result_comes_back_with_its_key(void **state)
{
    (void)state;
    const char *paths[2] = { cs_test_sample("digits_gnb.csv"), cs_test_sample("digits_ts.csv") };
    open_files(paths, 2);
    int stale = -1;
    const cs_job *top1 = tui_model_result(&m, TUI_SLOT_METRICS(0), &stale);
    assert_non_null(top1);
    assert_int_equal(stale, 0);

    st.settings.lens = CS_LENS_FULL;
    assert_int_equal(tui_model_submit(&m, &st), 2);     /* both files' metrics */
    settle();
    const cs_job *full = tui_model_result(&m, TUI_SLOT_METRICS(0), &stale);
    assert_ptr_not_equal(full, top1);
    assert_int_equal(stale, 0);
    assert_int_equal(cs_metrics_job_of(full)->settings.lens, CS_LENS_FULL);

    st.settings.lens = CS_LENS_TOP1;
    assert_int_equal(tui_model_submit(&m, &st), 0);     /* served from the kept results */
    assert_ptr_equal(tui_model_result(&m, TUI_SLOT_METRICS(0), &stale), top1);
    assert_int_equal(stale, 0);
    assert_int_equal(cs_metrics_job_of(top1)->settings.lens, CS_LENS_TOP1);
    char what[64];
    double p;
    assert_int_equal(tui_model_busy(&m, what, sizeof what, &p), 0);   /* "ready" */

    st.settings.lens = CS_LENS_FULL;                    /* and the other way */
    assert_int_equal(tui_model_submit(&m, &st), 0);
    assert_ptr_equal(tui_model_result(&m, TUI_SLOT_METRICS(0), &stale), full);
    assert_int_equal(stale, 0);

    /* the `l` key round: top1 > topk > class > classwise > full > top1, each lens computed
     * before the next key; the round again finds every lens kept (the key leaves k at 2 when it
     * comes back to top1, which top1's result does not depend on) */
    st.settings.lens = CS_LENS_TOP1;
    tui_model_submit(&m, &st);
    const cs_job *got[5];
    for (int i = 0; i < 5; i++) {
        if (i) tui_action_dispatch(&st, 'l');
        tui_model_submit(&m, &st);
        settle();
        got[i] = tui_model_result(&m, TUI_SLOT_METRICS(1), &stale);
        assert_int_equal(stale, 0);
    }
    assert_int_equal(st.settings.lens, CS_LENS_FULL);
    for (int i = 0; i < 5; i++) {
        tui_action_dispatch(&st, 'l');
        assert_int_equal(tui_model_submit(&m, &st), 0);
        assert_ptr_equal(tui_model_result(&m, TUI_SLOT_METRICS(1), &stale), got[i]);
        assert_int_equal(stale, 0);
    }
    close_files();
}

/* Leaving the Variance view cancels its curves (a size curve of 100,000 repeats on 1797 rows
 * would run far beyond the liveness limit); coming back asks again. */
static void test_leaving_a_view_cancels_its_curves(void **state)
{
    (void)state;
    const char *paths[1] = { cs_test_sample("digits_gnb.csv") };
    open_files(paths, 1);
    st.view = TUI_VIEW_VARIANCE;
    st.repeats = 100000;
    assert_int_equal(tui_model_submit(&m, &st), 2);
    cs_test_wait_running(b, TUI_SLOT_SIZE);
    st.view = TUI_VIEW_RELIABILITY;
    assert_int_equal(tui_model_submit(&m, &st), 0);
    assert_false(cs_backend_busy(b, TUI_SLOT_SIZE));
    assert_false(cs_backend_busy(b, TUI_SLOT_BINS));
    char what[64];
    double p;
    assert_int_equal(tui_model_busy(&m, what, sizeof what, &p), 0);   /* "ready" */
    st.view = TUI_VIEW_VARIANCE;
    assert_int_equal(tui_model_submit(&m, &st), 2);
    assert_true(cs_backend_busy(b, TUI_SLOT_SIZE));
    close_files();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_result_keeps_its_dataset),
        cmocka_unit_test(test_busy_until_collected),
        cmocka_unit_test(test_keep_files_drops_and_adds_again),
        cmocka_unit_test(test_only_what_depends_on_a_change),
        cmocka_unit_test(test_setting_fields_cover_the_settings),
        cmocka_unit_test(test_every_setting_is_in_the_key),
        cmocka_unit_test(test_kept_result_comes_back_with_its_key),
        cmocka_unit_test(test_leaving_a_view_cancels_its_curves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
