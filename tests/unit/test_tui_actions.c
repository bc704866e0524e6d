/* Unit tests of the dashboard's action table, prompt line and command line (no terminal). */
#include "support/cs_test.h"

#include <stdio.h>
#include <string.h>

#include "calscope/recal.h"
#include "tui/actions.h"
#include "tui/prompt.h"
#include "tui/state.h"
#include "tui/tui_curses.h"   /* KEY_* codes */

static void fresh(tui_state *st)
{
    tui_state_init(st);
    st->paths[0] = "a.csv";
    st->n_files = 1;
    st->n_classes = 10;
    tui_actions_set_select_check(NULL, NULL);
}

static void test_keys_unique_and_documented(void **state)
{
    (void)state;
    size_t n;
    const tui_action *a = tui_actions(&n);
    assert_true(n > 15);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(a[i].handler);   /* every row is a key (flags live in session/flags.c) */
        assert_non_null(a[i].help);
        assert_non_null(a[i].key_label);
        assert_true(a[i].keys[0] != 0);
        for (int k = 0; k < TUI_ACTION_KEYS && a[i].keys[k]; k++) {
            /* each key has exactly one action, and lookup finds this one */
            assert_ptr_equal(tui_action_for_key(a[i].keys[k]), &a[i]);
            for (size_t j = i + 1; j < n; j++)
                for (int m = 0; m < TUI_ACTION_KEYS && a[j].keys[m]; m++)
                    assert_int_not_equal(a[i].keys[k], a[j].keys[m]);
        }
    }
    assert_null(tui_action_for_key('Z'));
}

static void test_bins_keys(void **state)
{
    (void)state;
    tui_state st;
    fresh(&st);
    unsigned f = tui_action_dispatch(&st, '+');
    assert_int_equal(st.settings.bins, 16);
    assert_true(f & TUI_RECOMPUTE);
    assert_true(f & TUI_REDRAW);
    tui_action_dispatch(&st, '-');
    tui_action_dispatch(&st, '-');
    assert_int_equal(st.settings.bins, 14);
    st.settings.bins = 1;
    assert_int_equal(tui_action_dispatch(&st, '-'), 0);    /* no change, nothing to do */
    assert_int_equal(st.settings.bins, 1);
}

static void test_lens_cycle(void **state)
{
    (void)state;
    tui_state st;
    fresh(&st);
    const char *want[] = { "topk:2", "class:#0", "classwise", "full", "top1" };
    char buf[64];
    for (size_t i = 0; i < 5; i++) {
        unsigned f = tui_action_dispatch(&st, 'l');
        assert_true(f & TUI_RECOMPUTE);
        cs_settings_lens_name(&st.settings, buf, sizeof buf);
        assert_string_equal(buf, want[i]);
    }
    /* k and class keys follow into the lens */
    tui_action_dispatch(&st, 'l');                 /* topk:2 */
    tui_action_dispatch(&st, 'k');
    cs_settings_lens_name(&st.settings, buf, sizeof buf);
    assert_string_equal(buf, "topk:3");
    tui_action_dispatch(&st, 'l');                 /* class:0 */
    tui_action_dispatch(&st, 'C');                 /* previous class wraps to 9 */
    cs_settings_lens_name(&st.settings, buf, sizeof buf);
    assert_string_equal(buf, "class:#9");
}

static void test_sigma_binning_distance(void **state)
{
    (void)state;
    tui_state st;
    fresh(&st);
    tui_action_dispatch(&st, 's');
    assert_true(st.settings.sigma == 0.15);
    tui_action_dispatch(&st, 'S');
    tui_action_dispatch(&st, 'S');
    assert_true(st.settings.sigma == 0.075);
    tui_action_dispatch(&st, 'm');
    assert_int_equal(st.settings.binning, CS_BIN_MASS);
    tui_action_dispatch(&st, 'm');                 /* every binning, whatever the lens */
    assert_int_equal(st.settings.binning, CS_BIN_KDTREE);
    tui_action_dispatch(&st, 'm');
    assert_int_equal(st.settings.binning, CS_BIN_UNIFORM);
    st.settings.lens = CS_LENS_CLASS;
    for (int i = 0; i < 2; i++) tui_action_dispatch(&st, 'm');
    assert_int_equal(st.settings.binning, CS_BIN_KDTREE);
    tui_action_dispatch(&st, 'd');
    assert_int_equal(st.settings.distance, CS_DIST_L2);
    tui_action_dispatch(&st, 'd');
    tui_action_dispatch(&st, 'd');
    assert_int_equal(st.settings.distance, CS_DIST_TVD);
}

/* y Y step gamma on its ladder under the kd-tree; elsewhere the key says why it does nothing */
static void test_gamma_key(void **state)
{
    (void)state;
    tui_state st;
    fresh(&st);
    unsigned f = tui_action_dispatch(&st, 'y');
    assert_false(f & TUI_RECOMPUTE);
    assert_true(st.settings.gamma == 0.1);
    assert_string_equal(st.message, "gamma sets the kd-tree's bins: m switches the binning to kdtree first");
    st.settings.binning = CS_BIN_KDTREE;
    f = tui_action_dispatch(&st, 'y');
    assert_true(f & TUI_RECOMPUTE);
    assert_true(st.settings.gamma == 0.2);
    tui_action_dispatch(&st, 'Y');
    tui_action_dispatch(&st, 'Y');
    assert_true(st.settings.gamma == 0.05);
    st.settings.gamma = 1;
    assert_int_equal(tui_action_dispatch(&st, 'y'), 0);   /* the top of (0, 1] */
    st.settings.gamma = 0.15;                             /* typed, off the ladder */
    tui_action_dispatch(&st, 'Y');
    assert_true(st.settings.gamma == 0.1);
    char buf[2048];
    tui_command_line(&st, buf, sizeof buf);
    assert_non_null(strstr(buf, "--binning kdtree --gamma 0.1 "));
}

/* l comes back to the --lens group: the dashboard started with */
static void test_lens_group_returns(void **state)
{
    (void)state;
    tui_state st;
    fresh(&st);
    st.settings.lens = CS_LENS_GROUP;
    snprintf(st.settings.lens_arg, sizeof st.settings.lens_arg, "0,1;2,3");
    const char *want[] = { "top1", "topk:2", "class:#0", "classwise", "full", "group:0,1;2,3", "top1" };
    char buf[64];
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        tui_action_dispatch(&st, 'l');
        cs_settings_lens_name(&st.settings, buf, sizeof buf);
        assert_string_equal(buf, want[i]);
    }
}

/* A key that does not apply leaves a message saying why */
static void test_keys_say_why(void **state)
{
    (void)state;
    tui_state st;
    fresh(&st);
    unsigned f = tui_action_dispatch(&st, 'f');          /* one file */
    assert_true(f & TUI_REDRAW);
    assert_false(f & TUI_RECOMPUTE);
    assert_string_equal(st.message, "one file loaded: f switches between files (calscope A.csv B.csv)");
    tui_action_dispatch(&st, 'k');                       /* top1 lens */
    assert_string_equal(st.message, "k = 3, for the topk lens (l selects it)");
    tui_action_dispatch(&st, ']');
    assert_string_equal(st.message, "[ ] move the focus in the methods table (view 5, p)");
    tui_action_dispatch(&st, 'r');
    assert_string_equal(st.message, "variance curve repeats 50 (the curves are in view 3)");
    tui_action_dispatch(&st, 'z');
    assert_string_equal(st.message, "z does nothing here (? lists the keys)");
    tui_action_dispatch(&st, KEY_DOWN);                  /* Reliability without compat */
    assert_string_equal(st.message, "nothing to scroll: this view fits (x shows the compat panel, which scrolls)");
    st.message[0] = 0;
    assert_int_equal(tui_action_dispatch(&st, KEY_F(5)), 0);   /* an unbound function key: quiet */
    assert_string_equal(st.message, "");
}

static void test_views_and_overlays(void **state)
{
    (void)state;
    tui_state st;
    fresh(&st);
    tui_action_dispatch(&st, '3');
    assert_int_equal(st.view, TUI_VIEW_VARIANCE);
    tui_action_dispatch(&st, '\t');
    assert_int_equal(st.view, TUI_VIEW_CLASSES);
    tui_action_dispatch(&st, KEY_BTAB);
    tui_action_dispatch(&st, KEY_BTAB);
    tui_action_dispatch(&st, KEY_BTAB);
    tui_action_dispatch(&st, KEY_BTAB);
    assert_int_equal(st.view, TUI_VIEW_CASES);     /* wraps backwards */
    tui_action_dispatch(&st, '?');
    assert_int_equal(st.overlay, TUI_OVERLAY_HELP);
    tui_action_dispatch(&st, ':');
    assert_int_equal(st.overlay, TUI_OVERLAY_CMDLINE);
    assert_true(tui_action_dispatch(&st, 'q') & TUI_QUIT);
}

static void test_command_line(void **state)
{
    (void)state;
    tui_state st;
    fresh(&st);
    char buf[2048];
    tui_command_line(&st, buf, sizeof buf);
    /* no --seed without anything random: the report would refuse it */
    assert_string_equal(buf, "calscope report --lens top1 --bins 15 --binning uniform --sigma 0.1 "
                             "--distance tvd a.csv");
    st.paths[1] = "my file.csv";
    st.n_files = 2;
    snprintf(st.settings.select, sizeof st.settings.select, "conf > 0.9 and y in {1,2}");
    tui_action_dispatch(&st, '+');
    tui_action_dispatch(&st, 'i');
    tui_action_dispatch(&st, 'e');
    tui_action_dispatch(&st, 's');
    tui_command_line(&st, buf, sizeof buf);
    assert_string_equal(buf, "calscope report --lens top1 --bins 16 --binning uniform --sigma 0.15 "
                             "--distance tvd --select 'conf > 0.9 and y in {1,2}' --ci 200 "
                             "--seed 1 a.csv 'my file.csv'");
    /* the variance view adds the curve it shows */
    tui_action_dispatch(&st, '3');
    tui_command_line(&st, buf, sizeof buf);
    assert_non_null(strstr(buf, " --curve size --repeats 20 "));
    /* kd-tree prints gamma */
    st.settings.binning = CS_BIN_KDTREE;
    tui_command_line(&st, buf, sizeof buf);
    assert_non_null(strstr(buf, "--binning kdtree --gamma 0.1 "));
    /* file names are quoted by the flag table's one rule (test_flags.c) */
    st.paths[0] = "it's.csv";
    tui_command_line(&st, buf, sizeof buf);
    assert_non_null(strstr(buf, " 'it'\\''s.csv' 'my file.csv'"));
    /* the loading flags the dashboard was started with load the files the same way */
    st.load.skip_bad_rows = 1;
    st.load.sum_tol = 0.01;
    tui_command_line(&st, buf, sizeof buf);
    assert_non_null(strstr(buf, " --sum-tol 0.01 --skip-bad-rows --ci 200 "));
    /* the Compare view's methods panel: the recalibration and the reference it shows */
    st.view = TUI_VIEW_COMPARE;
    st.cmp_panel = TUI_CMP_TABLE;
    st.recal[0] = CS_RECAL_TS;
    st.n_recal = 1;
    st.active = 1;
    tui_command_line(&st, buf, sizeof buf);
    assert_non_null(strstr(buf, " --ci 200 --recal ts --reference 2 --seed 1 "));
    assert_null(strstr(buf, "--curve"));           /* not on screen any more */
}

/* t opens the picker; its keys move, fit or remove a method (refusing one the file cannot take,
 * with the reason), and close it; T drops the method added last. */
static void test_method_picker(void **state)
{
    (void)state;
    static tui_state st;
    tui_state_init(&st);
    st.n_classes = 10;
    tui_action_dispatch(&st, 't');
    assert_int_equal(st.overlay, TUI_OVERLAY_PICKER);
    assert_int_equal(st.picker_row, CS_RECAL_TS);
    tui_picker_key(&st, KEY_UP);                      /* wraps to the last method */
    assert_int_equal(st.picker_row, CS_RECAL_COUNT - 1);
    tui_picker_key(&st, 'j');
    tui_picker_key(&st, KEY_DOWN);
    assert_int_equal(st.picker_row, CS_RECAL_PLATT);
    tui_picker_key(&st, ' ');                         /* platt on 10 classes: refused */
    assert_int_equal(st.n_recal, 0);
    assert_int_equal(st.message_is_error, 1);
    assert_string_equal(st.message, "platt: binary files only: this file has 10 classes");
    assert_int_equal(st.view, TUI_VIEW_RELIABILITY);
    st.picker_row = CS_RECAL_MS;
    tui_picker_key(&st, ' ');
    assert_int_equal(st.message[0], 0);
    st.picker_row = CS_RECAL_ETS;
    tui_picker_key(&st, '\r');
    assert_int_equal(st.n_recal, 2);
    assert_int_equal(st.recal[0], CS_RECAL_MS);
    assert_int_equal(st.recal[1], CS_RECAL_ETS);
    assert_int_equal(st.view, TUI_VIEW_COMPARE);      /* the methods panel under the picker */
    assert_int_equal(st.cmp_panel, TUI_CMP_TABLE);
    assert_int_equal(st.overlay, TUI_OVERLAY_PICKER);
    st.picker_row = CS_RECAL_MS;
    tui_picker_key(&st, '\n');                        /* removed; ets keeps its order */
    assert_int_equal(st.n_recal, 1);
    assert_int_equal(st.recal[0], CS_RECAL_ETS);
    tui_picker_key(&st, 'x');                         /* says the keys, stays open */
    assert_non_null(strstr(st.message, "space or Enter fits or removes"));
    assert_int_equal(st.overlay, TUI_OVERLAY_PICKER);
    tui_picker_key(&st, 'q');
    assert_int_equal(st.overlay, TUI_OVERLAY_NONE);
    st.n_classes = 21;                                /* ms above its class limit */
    tui_action_dispatch(&st, 't');
    tui_picker_key(&st, 27);
    assert_int_equal(st.overlay, TUI_OVERLAY_NONE);
    tui_action_dispatch(&st, 't');
    tui_picker_key(&st, ' ');                         /* the focus stayed on ms */
    assert_string_equal(st.message, "ms: up to 20 classes: this file has 21 (vs or ts instead)");
    tui_picker_key(&st, 't');
    assert_int_equal(st.overlay, TUI_OVERLAY_NONE);
    tui_action_dispatch(&st, 'T');
    assert_int_equal(st.n_recal, 0);
    tui_action_dispatch(&st, 'T');
    assert_string_equal(st.message, "no recalibration to remove (t lists the methods)");
}

/* A selection longer than the settings hold: the keys past the limit are refused with a
 * visible message, the text typed so far is kept whole. */
static void test_prompt_refuses_text_past_its_limit(void **state)
{
    (void)state;
    static tui_state st;
    tui_state_init(&st);
    tui_action_dispatch(&st, '/');
    assert_int_equal(st.prompt.kind, TUI_PROMPT_SELECT);
    size_t room = sizeof st.prompt.text - 1;
    for (size_t i = 0; i < room; i++) tui_prompt_key(&st, 'a');
    assert_int_equal(st.prompt.len, room);
    assert_string_equal(st.message, "");
    unsigned f = tui_prompt_key(&st, 'c');
    assert_true(f & TUI_REDRAW);
    assert_int_equal(st.prompt.len, room);
    assert_int_equal(st.message_is_error, 1);
    assert_string_equal(st.message, "select: too long: at most 511 characters; 'c' and what "
                                    "follows were not typed");
    /* typed on (or pasted): the message names the first key refused, not the last */
    tui_prompt_key(&st, 'X');
    tui_prompt_key(&st, 'Y');
    tui_prompt_key(&st, 'Z');
    assert_int_equal(st.prompt.len, room);
    assert_string_equal(st.message, "select: too long: at most 511 characters; 'c' and what "
                                    "follows were not typed");
    /* a change of the text ends the run: the next refusal names its own first key */
    tui_prompt_key(&st, 127);
    tui_prompt_key(&st, 'q');
    tui_prompt_key(&st, 'W');
    tui_prompt_key(&st, 'V');
    assert_string_equal(st.message, "select: too long: at most 511 characters; 'W' and what "
                                    "follows were not typed");
    /* the prompt opened again starts with no refusal */
    tui_prompt_key(&st, 27);
    tui_action_dispatch(&st, '/');
    assert_int_equal(st.prompt.refused, 0);
}

static void type(tui_state *st, const char *s)
{
    for (; *s; s++) tui_prompt_key(st, (unsigned char)*s);
}

static int reject_gt(void *ctx, const char *expr, char *err, size_t size)
{
    (void)ctx;
    if (strstr(expr, ">>")) { snprintf(err, size, "selection: bad\n%s\n     ^", expr); return -1; }
    return 0;
}

static void test_prompt_select_and_history(void **state)
{
    (void)state;
    tui_state st;
    fresh(&st);
    tui_actions_set_select_check(reject_gt, NULL);
    unsigned f = tui_action_dispatch(&st, '/');
    assert_true(f & TUI_PROMPT);
    assert_int_equal(st.prompt.kind, TUI_PROMPT_SELECT);
    type(&st, "conf > 0.5");
    f = tui_prompt_key(&st, '\n');
    assert_true(f & TUI_RECOMPUTE);
    assert_string_equal(st.settings.select, "conf > 0.5");
    assert_int_equal(st.prompt.kind, TUI_PROMPT_NONE);

    /* a bad expression: message with the caret, old selection kept */
    tui_action_dispatch(&st, '/');
    tui_prompt_key(&st, 21);                       /* Ctrl-U clears */
    type(&st, "conf >> 2");
    f = tui_prompt_key(&st, '\n');
    assert_false(f & TUI_RECOMPUTE);
    assert_string_equal(st.settings.select, "conf > 0.5");
    assert_non_null(strstr(st.message, "^"));
    assert_int_equal(st.message_is_error, 1);

    /* history: Up gives the newest first, Down returns to the fresh line */
    tui_action_dispatch(&st, '/');
    tui_prompt_key(&st, 21);
    type(&st, "y == 1");
    tui_prompt_key(&st, KEY_UP);
    assert_string_equal(st.prompt.text, "conf >> 2");
    tui_prompt_key(&st, KEY_UP);
    assert_string_equal(st.prompt.text, "conf > 0.5");
    tui_prompt_key(&st, KEY_UP);                   /* stays at the oldest */
    assert_string_equal(st.prompt.text, "conf > 0.5");
    tui_prompt_key(&st, KEY_DOWN);
    tui_prompt_key(&st, KEY_DOWN);
    assert_string_equal(st.prompt.text, "y == 1");
    /* editing: Left, Backspace, insert */
    tui_prompt_key(&st, KEY_LEFT);
    tui_prompt_key(&st, KEY_BACKSPACE);
    type(&st, "!");
    assert_string_equal(st.prompt.text, "y ==!1");
    tui_prompt_key(&st, 27);                       /* Esc cancels */
    assert_int_equal(st.prompt.kind, TUI_PROMPT_NONE);
    assert_string_equal(st.settings.select, "conf > 0.5");
}

static void test_prompt_bins_and_seed(void **state)
{
    (void)state;
    tui_state st;
    fresh(&st);
    tui_action_dispatch(&st, 'b');
    assert_string_equal(st.prompt.text, "15");
    tui_prompt_key(&st, KEY_BACKSPACE);
    tui_prompt_key(&st, KEY_BACKSPACE);
    type(&st, "40");
    assert_true(tui_prompt_key(&st, '\r') & TUI_RECOMPUTE);
    assert_int_equal(st.settings.bins, 40);
    tui_action_dispatch(&st, 'b');
    type(&st, "x");
    assert_false(tui_prompt_key(&st, '\r') & TUI_RECOMPUTE);
    assert_int_equal(st.settings.bins, 40);
    assert_true(st.message_is_error);
    tui_action_dispatch(&st, 'E');
    tui_prompt_key(&st, 21);
    type(&st, "1234");
    tui_prompt_key(&st, '\r');
    assert_int_equal(st.seed, 1234);
    /* the --seed rule: any 64-bit value (it stopped at 2^31 - 1), nothing signed */
    tui_action_dispatch(&st, 'E');
    tui_prompt_key(&st, 21);
    type(&st, "18446744073709551615");
    tui_prompt_key(&st, '\r');
    assert_true(st.seed == 18446744073709551615ul);
    tui_action_dispatch(&st, 'E');
    tui_prompt_key(&st, 21);
    type(&st, "-1");
    tui_prompt_key(&st, '\r');
    assert_true(st.seed == 18446744073709551615ul);
    assert_string_equal(st.message, "seed: want a non-negative integer, got '-1'");
}

/* Keys added with the Cases view, the RECE-G overlay and the smooth curve: what they change and what they ask the
 * loop to recompute. */
static void test_class_overlay_and_help_pages(void **state)
{
    (void)state;
    tui_state st;
    fresh(&st);
    /* class under the top1 lens: only what is shown changes (the Cases heat map, Classes view) */
    assert_int_equal(st.klass, 0);
    unsigned f = tui_action_dispatch(&st, 'c');
    assert_int_equal(st.klass, 1);
    assert_int_equal(f & TUI_RECOMPUTE, 0);
    assert_true(f & TUI_REDRAW);
    char buf[64];
    cs_settings_lens_name(&st.settings, buf, sizeof buf);
    assert_string_equal(buf, "top1");
    /* under the class lens it is a setting: recompute */
    tui_action_dispatch(&st, 'l');
    tui_action_dispatch(&st, 'l');                 /* class:1 */
    f = tui_action_dispatch(&st, 'c');
    assert_true(f & TUI_RECOMPUTE);
    cs_settings_lens_name(&st.settings, buf, sizeof buf);
    assert_string_equal(buf, "class:#2");

    /* g: the RECE-G overlay, on by default; a redraw, never a recompute, no flag */
    assert_int_equal(st.rece_overlay, 1);
    f = tui_action_dispatch(&st, 'g');
    assert_int_equal(st.rece_overlay, 0);
    assert_int_equal(f, TUI_REDRAW);
    tui_action_dispatch(&st, 'g');
    assert_int_equal(st.rece_overlay, 1);
    char cmd[1024];
    tui_command_line(&st, cmd, sizeof cmd);
    assert_null(strstr(cmd, "rece"));

    /* o: relplot's smoothed curve in place of the bars; the metrics result holds it already,
     * so in the Reliability view a redraw only; from another view it goes there */
    assert_int_equal(st.smooth, 0);
    f = tui_action_dispatch(&st, 'o');
    assert_int_equal(st.smooth, 1);
    assert_int_equal(f, TUI_REDRAW);
    st.view = TUI_VIEW_VARIANCE;
    f = tui_action_dispatch(&st, 'o');
    assert_int_equal(st.smooth, 0);
    assert_int_equal(st.view, TUI_VIEW_RELIABILITY);
    assert_int_equal(f, TUI_REDRAW | TUI_RELAYOUT | TUI_RECOMPUTE);
    tui_command_line(&st, cmd, sizeof cmd);
    assert_null(strstr(cmd, "smooth"));            /* a picture, not a setting */

    /* ?: pages through the help when the drawing code says there are pages, then closes */
    tui_action_dispatch(&st, '?');
    assert_int_equal(st.overlay, TUI_OVERLAY_HELP);
    st.help_pages = 2;                             /* as draw_help sets it on a small screen */
    tui_action_dispatch(&st, '?');
    assert_int_equal(st.overlay, TUI_OVERLAY_HELP);
    assert_int_equal(st.help_page, 1);
    tui_action_dispatch(&st, '?');
    assert_int_equal(st.overlay, TUI_OVERLAY_NONE);
    assert_int_equal(st.help_page, 0);
    st.help_pages = 1;
    tui_action_dispatch(&st, '?');
    tui_action_dispatch(&st, '?');
    assert_int_equal(st.overlay, TUI_OVERLAY_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_unique_and_documented),
        cmocka_unit_test(test_bins_keys),
        cmocka_unit_test(test_lens_cycle),
        cmocka_unit_test(test_sigma_binning_distance),
        cmocka_unit_test(test_gamma_key),
        cmocka_unit_test(test_lens_group_returns),
        cmocka_unit_test(test_keys_say_why),
        cmocka_unit_test(test_views_and_overlays),
        cmocka_unit_test(test_command_line),
        cmocka_unit_test(test_method_picker),
        cmocka_unit_test(test_prompt_select_and_history),
        cmocka_unit_test(test_prompt_refuses_text_past_its_limit),
        cmocka_unit_test(test_prompt_bins_and_seed),
        cmocka_unit_test(test_class_overlay_and_help_pages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
