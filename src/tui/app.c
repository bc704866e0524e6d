/* The dashboard: the event loop and drawing the frame (tabs, status line,
 * prompt, overlays) around the current view.
 *
 * One thread owns curses. The loop polls stdin and the backend's wake-up pipe together; keys and
 * wake-ups only set dirty flags, and the screen is drawn at most once per pass (erase, draw,
 * one doupdate). Progress alone redraws at most ~10 times a second. `q` leaves curses first, then
 * cancels every job and gives them CS_BACKEND_QUIT_WAIT_MS: quitting never waits for a job. */
#include "tui/tui.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calscope/backend.h"
#include "calscope/load.h"
#include "calscope/select.h"
#include "chart/cells.h"
#include "chart/words.h"
#include "session/flags.h"
#include "tui/actions.h"
#include "tui/blit.h"
#include "tui/layout.h"
#include "tui/model.h"
#include "tui/prompt.h"
#include "tui/status.h"
#include "tui/theme.h"
#include "tui/trend.h"
#include "tui/tui_curses.h"
#include "tui/views.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- drawing ----------------------------------------------------------------------------- */

typedef struct app {
    tui_state st;
    tui_model m;
    cs_backend *backend;
    const ch_glyphs *g;
    int color;
    char busy_text[128];
    double busy_progress;
    int busy;
    FILE *trace;
    tui_trend trend;           /* --follow: the run's epochs (st.follow set) */
} app;

/* Rows a message takes at `cols` columns, wrapped between words as tui_draw_lines draws it. */
static int count_lines(const char *s, int cols)
{
    if (!s[0]) return 0;
    char wrapped[4096];
    return ch_wrap(s, cols, wrapped, sizeof wrapped);
}

static void draw_tabs(const app *a, const tui_layout *l)
{
    int x = 0;
    int n_views = tui_views_shown(&a->st);
    for (int v = 0; v < n_views; v++) {
        char t[48];
        tui_tab_label((tui_view)v, a->st.view, l->cols, n_views, t, sizeof t);
        int role = v == (int)a->st.view ? TUI_ROLE_TAB_ACTIVE : TUI_ROLE_TAB;
        x += tui_text(0, x, l->cols - x, role, t);
    }
    const char *hint = "? keys";
    if (x + 8 <= l->cols) tui_text(0, l->cols - 7, 7, TUI_ROLE_TAB, hint);
}

/* The status line: the settings on the left, what the backend does on the right. At 80
 * columns the file name shortens first (told apart from the other files'), then seed,
 * distance and sigma go; the lens, bins, ci and selection stay, cut last with a mark that is
 * no operator (tui/status.h). */
static void draw_status(const app *a, const tui_layout *l)
{
    const tui_state *st = &a->st;
    char lens[64], dist[80], line[1024], where[64], bins[64], sigma[48], seed[32], ci[32],
         sel[CS_SPEC_MAX + 8];
    cs_settings_lens_name(&st->settings, lens, sizeof lens);
    tui_distance_spelling(&st->settings, dist, sizeof dist);
    const char *fnames[TUI_MAX_FILES];
    for (size_t f = 0; f < a->m.n_files; f++) fnames[f] = a->m.files[f].name;
    if (st->follow) {
        /* the selected epoch of those the user has seen; the ones that came since are "new" */
        size_t seen = st->epochs_seen < st->n_epochs ? st->epochs_seen : st->n_epochs;
        if (seen <= st->epoch) seen = st->epoch + 1;
        int n = snprintf(where, sizeof where, "epoch %zu/%zu", st->n_epochs ? st->epoch + 1 : 0, st->n_epochs ? seen : 0);
        if (st->n_epochs > seen && n > 0)
            snprintf(where + n, sizeof where - (size_t)n, " (+%zu new)", st->n_epochs - seen);
    } else {
        snprintf(where, sizeof where, "[%zu/%zu]", st->active + 1, st->n_files);
    }
    snprintf(bins, sizeof bins, "M %d %s", st->settings.bins, tui_binning_spelling(st->settings.binning));
    if (st->settings.binning == CS_BIN_KDTREE) {          /* gamma: what y Y change */
        size_t n = strlen(bins);
        snprintf(bins + n, sizeof bins - n, " %s %g", a->g->utf8 ? "\xce\xb3" : "gamma", st->settings.gamma);
    }
    snprintf(sigma, sizeof sigma, "%s %g", a->g->utf8 ? "\xcf\x83" : "sigma", st->settings.sigma);
    snprintf(seed, sizeof seed, "seed %lu", st->seed);
    ci[0] = sel[0] = 0;
    if (st->ci) snprintf(ci, sizeof ci, "ci %d", st->ci);
    if (st->settings.select[0]) snprintf(sel, sizeof sel, "sel %s", st->settings.select);
    const tui_status_part parts[] = {
        { lens, 0 }, { bins, 0 }, { sigma, 3 }, { dist, 2 }, { seed, 1 }, { ci, 0 }, { sel, 0 },
    };
    /* right part: what the backend is doing */
    char right[160];
    if (a->busy) snprintf(right, sizeof right, " %s %3.0f%% ", a->busy_text, a->busy_progress * 100);
    else snprintf(right, sizeof right, " ready ");
    int rw = (int)strlen(right);
    int y = l->status.y;
    /* fill the whole row with the status role */
    char blank[512];
    int w = l->cols < (int)sizeof blank - 1 ? l->cols : (int)sizeof blank - 1;
    memset(blank, ' ', (size_t)w);
    blank[w] = 0;
    tui_text(y, 0, l->cols, TUI_ROLE_STATUS, blank);
    int lw = l->cols - rw - 1;
    tui_status_in in = { fnames, a->m.n_files, st->active, where, a->g->utf8 ? "\xe2\x80\xa6" : "~",
                         parts, sizeof parts / sizeof parts[0] };
    tui_status_fit(line, sizeof line, lw, &in);
    tui_text(y, 0, lw, TUI_ROLE_STATUS, line);
    tui_text(y, l->cols - rw, rw, TUI_ROLE_STATUS, right);
}

static void draw_message(const app *a, const tui_layout *l)
{
    const tui_state *st = &a->st;
    if (l->message.h == 0) return;
    if (st->prompt.kind != TUI_PROMPT_NONE) {
        const char *label = tui_prompt_label(st->prompt.kind);
        int lw = (int)strlen(label);
        int y = l->message.y + l->message.h - 1;
        tui_text(y, 0, lw, TUI_ROLE_PROMPT, label);
        /* scroll the text so the cursor stays visible */
        int room = l->cols - lw - 1;
        int start = (int)st->prompt.cursor > room ? (int)st->prompt.cursor - room : 0;
        tui_text(y, lw, room, CH_ROLE_TEXT, st->prompt.text + start);
        if (l->message.h > 1 && st->message[0]) {
            tui_rect r = { 0, l->message.y, l->cols, l->message.h - 1 };
            tui_draw_lines(&r, r.y, st->message_is_error ? TUI_ROLE_ERROR : CH_ROLE_TEXT, st->message);
        }
        return;
    }
    tui_draw_lines(&l->message, l->message.y, st->message_is_error ? TUI_ROLE_ERROR : CH_ROLE_TEXT,
                   st->message);
}

/* One column when it fits between the title and the status line; else two columns when no
 * text is cut; else one column in pages (`?` turns the page). The note only where there is room. */
static void draw_help(tui_state *st, const tui_layout *l)
{
    size_t n;
    const tui_action *acts = tui_actions(&n);
    int shown = 0, longest = 0;
    for (size_t i = 0; i < n; i++)
        if (acts[i].help) {
            shown++;
            if ((int)strlen(acts[i].help) > longest) longest = (int)strlen(acts[i].help);
        }
    int rows = l->lines - 2, ncols = 1, per = shown, first = 0;
    st->help_pages = 1;
    if (shown > rows) {
        if (l->cols / 2 - 8 >= longest) {
            ncols = 2;
            per = (shown + 1) / 2;
        } else {
            per = rows - 1;                          /* a row for "? next page" */
            st->help_pages = (shown + per - 1) / per;
            if (st->help_page >= st->help_pages) st->help_page = 0;
            first = st->help_page * per;
        }
    }
    int cw = l->cols / ncols;
    for (int r = 0; r < l->lines - 1; r++) { move(r, 0); clrtoeol(); }
    if (st->help_pages > 1)
        tui_textf(0, 0, l->cols, CH_ROLE_TITLE, "calscope keys %d/%d  (? next page; q closes, q again quits)",
                  st->help_page + 1, st->help_pages);
    else
        tui_text(0, 0, l->cols, CH_ROLE_TITLE, "calscope keys  (q or any key closes; q again quits)");
    int k = 0, y = 1;
    for (size_t i = 0; i < n; i++) {
        if (!acts[i].help) continue;
        int idx = k++ - first;
        if (idx < 0 || idx >= per * ncols) continue;
        int col = idx / per, row = idx % per;
        tui_textf(1 + row, col * cw, 5, TUI_ROLE_HEADING, "%-5s", acts[i].key_label);
        tui_text(1 + row, col * cw + 6, cw - 7, CH_ROLE_TEXT, acts[i].help);
        if (1 + row >= y) y = 2 + row;
    }
    if (st->help_pages > 1 && st->help_page + 1 < st->help_pages)
        tui_text(y, 0, l->cols, CH_ROLE_LABEL, "-- ? for more --");
    else if (y < l->lines - 1)
        tui_text(y, 0, l->cols, CH_ROLE_LABEL,
                 "ACE = mean gap over non-empty bins, not Nixon's adaptive ACE.");
}

/* The command line, broken at spaces into lines ending in " \\" so a copied block pastes as
 * one shell command; no side borders, so nothing but the command is copied. */
static void draw_cmdline(const app *a, const tui_layout *l)
{
    char cmd[4096];
    tui_command_line(&a->st, cmd, sizeof cmd);
    int w = l->cols - 4;                        /* text from column 2, room for " \\" */
    char lines[32][512];
    int n = 0;
    const char *s = cmd;
    while (*s && n < 32) {
        int len = (int)strlen(s);
        int take = len;
        if (len > w - 2) {
            take = w - 2;
            /* break at the last space that is not inside quotes */
            int q = 0, brk = -1;
            for (int i = 0; i < take; i++) {
                if (s[i] == '\'') q = !q;
                if (s[i] == ' ' && !q) brk = i;
            }
            if (brk > 0) take = brk;
        }
        snprintf(lines[n], sizeof lines[n], "%.*s%s", take, s, take < len ? " \\" : "");
        n++;
        s += take;
        while (*s == ' ') s++;
    }
    int h = n + 4;
    if (h > l->body.h) h = l->body.h;
    int y = l->body.y + (l->body.h - h) / 2;
    for (int r = y; r < y + h; r++) { move(r, 0); clrtoeol(); }
    mvhline(y, 0, ACS_HLINE, l->cols);
    tui_text(y, 2, l->cols - 4, CH_ROLE_TITLE, " equivalent command line (any key closes) ");
    for (int r = 0; r < n && r < h - 3; r++) tui_text(y + 2 + r, 2, l->cols - 2, CH_ROLE_TEXT, lines[r]);
    mvhline(y + h - 1, 0, ACS_HLINE, l->cols);
}

static void draw(app *a)
{
    tui_state *st = &a->st;
    int msg_lines = count_lines(st->message, COLS);
    if (st->prompt.kind != TUI_PROMPT_NONE) msg_lines++;
    tui_layout l;
    tui_layout_compute(&l, st->view, COLS, LINES, msg_lines);
    erase();
    if (l.too_small) {
        curs_set(0);
        char t[128];
        snprintf(t, sizeof t, "terminal too small: need %d%s%d, have %d%s%d\nq quits", TUI_MIN_W,
                 a->g->utf8 ? "\xc3\x97" : "x", TUI_MIN_H, COLS, a->g->utf8 ? "\xc3\x97" : "x", LINES);
        /* wrapped between words to the screen it is shown on, however narrow */
        int rows = count_lines(t, COLS);
        tui_rect at = { 0, LINES > rows ? (LINES - rows) / 2 : 0, COLS, LINES };
        tui_draw_lines(&at, at.y, TUI_ROLE_ERROR, t);
        wnoutrefresh(stdscr);
        doupdate();
        return;
    }
    tui_ctx c = { st, &a->m, a->g };
    draw_tabs(a, &l);
    switch (st->view) {
    case TUI_VIEW_RELIABILITY: tui_view_reliability(&c, &l); break;
    case TUI_VIEW_TOPK: tui_view_topk(&c, &l); break;
    case TUI_VIEW_VARIANCE: tui_view_variance(&c, &l); break;
    case TUI_VIEW_CLASSES: tui_view_classes(&c, &l); break;
    case TUI_VIEW_COMPARE: tui_view_compare(&c, &l); break;
    case TUI_VIEW_CASES: tui_view_cases(&c, &l); break;
    case TUI_VIEW_TREND: tui_view_trend(&c, &a->trend, &l); break;
    default: break;
    }
    if (st->overlay == TUI_OVERLAY_HELP) draw_help(st, &l);
    else if (st->overlay == TUI_OVERLAY_CMDLINE) draw_cmdline(a, &l);
    else if (st->overlay == TUI_OVERLAY_PICKER) tui_draw_picker(&c, &l);
    draw_message(a, &l);
    draw_status(a, &l);
    if (st->prompt.kind != TUI_PROMPT_NONE) {
        int lw = (int)strlen(tui_prompt_label(st->prompt.kind));
        int room = l.cols - lw - 1;
        int cur = (int)st->prompt.cursor > room ? room : (int)st->prompt.cursor;
        curs_set(1);
        move(l.message.y + l.message.h - 1, lw + cur);
    } else {
        curs_set(0);
    }
    wnoutrefresh(stdscr);
    doupdate();
}

/* ---- selection check (UI thread; compiling an expression is cheap) ----------------------- */

static int check_select(void *ctx, const char *expr, char *errbuf, size_t size)
{
    app *a = ctx;
    const tui_file *f = a->st.active < a->m.n_files ? &a->m.files[a->st.active] : NULL;
    cs_error err;
    cs_error_clear(&err);
    if (!f || f->state != TUI_LOADED) {
        /* no dataset yet: its form now, the same message as on a loaded file; its names once
         * the file is there (the backend reports them) */
        if (cs_select_check_syntax(expr, &err) == CS_OK) return 0;
        snprintf(errbuf, size, "%s", err.msg);
        return -1;
    }
    cs_select *s = cs_select_compile(expr, f->data, &err);
    if (!s) { snprintf(errbuf, size, "%s", err.msg); return -1; }
    cs_select_free(s);
    return 0;
}

/* ---- keys -------------------------------------------------------------------------------- */

/* The mouse (off with --no-mouse): a click on a tab shows its view, the wheel scrolls as the
 * arrows do (three rows a notch). Both go through the action table like keys. */
static unsigned handle_mouse(app *a)
{
    MEVENT ev;
    if (getmouse(&ev) != OK) return 0;
    tui_state *st = &a->st;
    if (ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
        unsigned f = 0;
        for (int i = 0; i < 3; i++)
            f |= tui_action_dispatch(st, ev.bstate & BUTTON4_PRESSED ? KEY_UP : KEY_DOWN);
        return f;
    }
    if ((ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) && ev.y == 0) {
        int v = tui_tab_at(st->view, COLS, tui_views_shown(st), ev.x);
        if (v >= 0) return tui_action_dispatch(st, '1' + v);
    }
    return 0;
}

static unsigned handle_key(app *a, int key)
{
    tui_state *st = &a->st;
    if (key == KEY_RESIZE) return TUI_REDRAW | TUI_RELAYOUT;
    if (key == KEY_MOUSE && st->prompt.kind == TUI_PROMPT_NONE && st->overlay == TUI_OVERLAY_NONE) {
        unsigned f = 0;
        if (st->message[0]) { st->message[0] = 0; f |= TUI_REDRAW | TUI_RELAYOUT; }
        return f | handle_mouse(a);
    }
    if (st->prompt.kind != TUI_PROMPT_NONE) return tui_prompt_key(st, key);
    if (st->overlay == TUI_OVERLAY_PICKER) return tui_picker_key(st, key);   /* its own keys */
    /* any other key, q included, closes an overlay (as in less, tig, htop): q again quits */
    if (st->overlay != TUI_OVERLAY_NONE && key != '?' && key != ':') {
        st->overlay = TUI_OVERLAY_NONE;
        return TUI_REDRAW;
    }
    /* a message stays until the next key */
    unsigned f = 0;
    if (st->message[0] && key != 27) { st->message[0] = 0; f |= TUI_REDRAW | TUI_RELAYOUT; }
    return f | tui_action_dispatch(st, key);
}

/* Reads every key curses has; returns the dirty flags. */
static unsigned read_keys(app *a, double *key_time, int *keys_read)
{
    unsigned flags = 0;
    wint_t wc;
    int r;
    while ((r = get_wch(&wc)) != ERR) {
        int key = (int)wc;
        if (r == OK && wc > 127) continue;               /* non-ASCII text: not bound */
        if (!*keys_read) *key_time = now_s();
        (*keys_read)++;
        flags |= handle_key(a, key);
        if (flags & TUI_QUIT) break;
    }
    return flags;
}

/* ---- the terminal ----------------------------------------------------------------------- */

/* Where the keys come from: stdin, or /dev/tty when stdin carries the data (`calscope -`). */
static FILE *key_tty;
static SCREEN *screen;

/* The data from stdin and the keys from /dev/tty: `cat preds.csv | calscope -`. A terminal on
 * stdin would be read as CSV, so it is refused. Returns -1 on success, else the exit status. */
static int open_terminal(const tui_state *st)
{
    int data_on_stdin = 0;
    for (size_t f = 0; f < st->n_files; f++) data_on_stdin |= strcmp(st->paths[f], "-") == 0;
    if (data_on_stdin && isatty(STDIN_FILENO)) {
        fprintf(stderr, "calscope: -: standard input is a terminal, not data; pipe a file in "
                        "(cat FILE | calscope -) or name it\n");
        return 2;
    }
    if ((!data_on_stdin && !isatty(STDIN_FILENO)) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "calscope: the dashboard needs a terminal; use `calscope report` for "
                        "headless output\n");
        return 2;
    }
    int term = tui_term_check();
    if (term >= 0) return term;
    if (data_on_stdin) {
        key_tty = fopen("/dev/tty", "r");
        if (!key_tty) {
            fprintf(stderr, "calscope: -: no terminal for the keys (/dev/tty: %s); use "
                            "`calscope report -`\n", strerror(errno));
            return 2;
        }
    }
    return -1;
}

/* Fatal signals leave the terminal usable (htop's CRT_handleSIGSEGV habit): leave curses, say
 * which signal in one line, then die of it with the default action (core dump, exit status).
 * endwin is not async-signal-safe; the process is ending and a raw terminal is worse. SIGINT
 * too: ncurses' own handler for it leaves curses but exits 1 without a word, and a shell or a
 * script must see a death by SIGINT (status 130) to stop as Ctrl-C asks. */
static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGQUIT, SIGHUP, SIGTERM, SIGINT };

static void on_fatal_signal(int sig)
{
    endwin();
    char line[96];
    const char *name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGABRT ? "SIGABRT"
                     : sig == SIGFPE ? "SIGFPE" : sig == SIGILL ? "SIGILL" : sig == SIGQUIT ? "SIGQUIT"
                     : sig == SIGHUP ? "SIGHUP" : sig == SIGINT ? "SIGINT" : "SIGTERM";
    int n = snprintf(line, sizeof line, "calscope: %s; the terminal was restored\n", name);
    if (n > 0) { ssize_t w = write(STDERR_FILENO, line, (size_t)n); (void)w; }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_fatal_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        sigaction(fatal_signals[i], &sa, NULL);
}

/* A stop that did not come through the terminal (kill -STOP, a debugger) gives curses no
 * SIGTSTP to leave and re-enter its mode by: the shell takes the terminal back in cooked mode
 * (echo, line buffering) and `fg` resumes the dashboard in it, keys waiting for Enter. So every
 * SIGCONT marks the terminal as to be set up again; the loop does it (resume_terminal). The
 * handler sets the flag and writes a byte that wakes the loop's poll (write is async-signal-safe):
 * a flag alone would wait for poll's timeout when the signal came just before poll began. */
static volatile sig_atomic_t continued;
static int cont_pipe[2] = { -1, -1 };

static void on_sigcont(int sig)
{
    (void)sig;
    int saved = errno;
    continued = 1;
    if (cont_pipe[1] >= 0) { ssize_t w = write(cont_pipe[1], "c", 1); (void)w; }
    errno = saved;
}

/* Installs on_sigcont with its wake-up pipe (both ends non-blocking; a full pipe already wakes
 * the loop). Main thread, after newterm. */
static void catch_sigcont(void)
{
    if (pipe(cont_pipe) == 0)
        for (int i = 0; i < 2; i++) {
            fcntl(cont_pipe[i], F_SETFL, fcntl(cont_pipe[i], F_GETFL) | O_NONBLOCK);
            fcntl(cont_pipe[i], F_SETFD, FD_CLOEXEC);
        }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigcont;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGCONT, &sa, NULL);
}

/* After a SIGCONT: curses' terminal mode again (cbreak, no echo, keypad: what the program mode
 * saved) and the whole screen repainted, for whatever the shell wrote over it. The flags. */
static unsigned resume_terminal(void)
{
    if (!continued) return 0;
    continued = 0;
    char buf[64];
    while (cont_pipe[0] >= 0 && read(cont_pipe[0], buf, sizeof buf) > 0) {}
    reset_prog_mode();
    clearok(curscr, TRUE);
    return TUI_REDRAW | TUI_RELAYOUT;
}

/* ---- main -------------------------------------------------------------------------------- */

/* The backend, the model (its loads start) and --follow's trend. 0, or the exit status after
 * saying why on stderr (what was started is freed). */
static int start_engine(app *a)
{
    cs_error err;
    cs_error_clear(&err);
    /* The backend's workers block the UI's signals (SIGWINCH above all) themselves. */
    a->backend = cs_backend_new(a->st.threads, &err);
    if (!a->backend) { fprintf(stderr, "calscope: %s\n", err.msg); return 3; }
    char msg[1024];
    if (tui_model_init(&a->m, a->backend, &a->st, &a->st.load, msg, sizeof msg) != 0) {
        cs_backend_free(a->backend);
        fprintf(stderr, "calscope: %s\n", msg);
        return 3;
    }
    if (a->st.follow && tui_trend_open(&a->trend, &a->m, &a->st, msg, sizeof msg) != 0) {
        cs_backend_free(a->backend);
        tui_model_free(&a->m);
        return ss_usage_error(SS_DASH, "--follow %s", msg);
    }
    tui_actions_set_select_check(check_select, a);
    return 0;
}

/* curses on the terminal, keys unbuffered and without waiting. 0, or 2 after saying why (the
 * engine is freed then). */
static int start_curses(app *a)
{
    set_escdelay(25);
    screen = newterm(NULL, stdout, key_tty ? key_tty : stdin);
    if (!screen) {
        cs_backend_free(a->backend);
        tui_model_free(&a->m);
        fprintf(stderr, "calscope: cannot start curses (TERM=%s)\n", getenv("TERM") ? getenv("TERM") : "");
        return 2;
    }
    set_term(screen);
    a->color = tui_theme_init(a->st.no_color);
    cbreak();
    noecho();
    nonl();
    intrflush(stdscr, FALSE);
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    if (!a->st.no_mouse) {
        mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
        mouseinterval(0);                    /* presses at once, no wait for a click */
    }
    curs_set(0);
    return 0;
}

/* The active file's class count for the keys; --lens class:NAME names the class, and c/C
 * then cycle from that class. */
static void sync_classes(app *a)
{
    if (a->st.active >= a->m.n_files || !a->m.files[a->st.active].data) return;
    const cs_dataset *d = a->m.files[a->st.active].data;
    a->st.n_classes = d->k;
    int named = a->st.settings.lens == CS_LENS_CLASS && a->st.settings.lens_arg[0] != '#'
                    ? cs_dataset_class_index(d, a->st.settings.lens_arg) : -1;
    if (named >= 0) a->st.klass = named;
    if (a->st.klass >= (int)a->st.n_classes) a->st.klass = 0;
}

/* --mixture, a segmentation flag, --renormalize or --sum-tol that no file uses: the report's
 * rules, once every file is loaded (the dashboard then quits and says it, exit 2). The
 * message, or NULL (still loading, or the flags are used; asked once). */
static const char *unused_flag(app *a)
{
    if (!a->st.mixture_given && !a->st.seg_unused && !a->st.rows_unused) return NULL;
    int loading = 0, loaded = 0, tta = 0, manifest = 0, prob_rows = 0;
    for (size_t f = 0; f < a->m.n_files; f++) {
        const cs_dataset *d = a->m.files[f].data;
        loading |= a->m.files[f].state == TUI_LOADING || a->m.files[f].partial;
        loaded |= d != NULL;
        tta |= d && d->id && d->tta;
        manifest |= d && a->m.files[f].summary.manifest_cases > 0;
        prob_rows |= d && a->m.files[f].summary.prob_rows;
    }
    if (loading) return NULL;
    const char *unused = ss_mixture_unused(a->st.mixture_given, loaded, tta);
    if (!unused && loaded && !manifest) unused = a->st.seg_unused;
    if (!unused && loaded && !prob_rows) unused = a->st.rows_unused;
    a->st.mixture_given = 0;
    a->st.seg_unused = NULL;
    a->st.rows_unused = NULL;
    return unused;
}

/* The status line's progress, taken when its text or percent changed: at once when work
 * starts or ends, else at most ~10 times a second (last_draw: the last redraw's time).
 * Returns 1 when it was taken (a redraw is due); *busy says whether work runs. */
static int take_progress(app *a, double last_draw, int *busy)
{
    char text[128] = "";
    double prog = 0;
    *busy = tui_model_busy(&a->m, text, sizeof text, &prog);
    int changed = *busy != a->busy || strcmp(text, a->busy_text) != 0 ||
                  (int)(prog * 100) != (int)(a->busy_progress * 100);
    if (!changed || (*busy && *busy == a->busy && now_s() - last_draw < 0.1)) return 0;
    a->busy = *busy;
    snprintf(a->busy_text, sizeof a->busy_text, "%s", text);
    a->busy_progress = prog;
    return 1;
}

/* What the loop keeps between turns: the last redraw, and the keys read since it (for
 * CALSCOPE_TRACE's key-to-screen latencies). */
typedef struct {
    double last_draw, key_time;
    int pending_keys;
} turn_state;

/* One line of the trace per batch of keys: how many, and microseconds from the first to its
 * screen (0: no redraw followed). */
static void trace_keys(app *a, turn_state *t, double shown_after)
{
    if (a->trace && t->pending_keys) {
        fprintf(a->trace, "%d %.0f\n", t->pending_keys, shown_after * 1e6);
        fflush(a->trace);
    }
    t->pending_keys = 0;
}

/* Waits for a key, a finished job, a SIGCONT or --follow's next look (at most 100 ms while work
 * runs, else a second), and takes what came. The flags it raises; -1 when poll failed. */
static int wait_and_take(app *a, struct pollfd *fds, int busy, turn_state *t, unsigned *flags)
{
    int timeout = busy ? 100 : 1000;
    if (a->st.follow) {
        int tw = tui_trend_wait_ms(&a->trend);
        if (tw < timeout) timeout = tw;
    }
    int pr = poll(fds, 4, timeout);
    if (pr < 0 && errno != EINTR) return -1;
    *flags |= resume_terminal();               /* before the keys: they need the mode back */
    if (pr > 0 && (fds[1].revents & POLLIN)) *flags |= tui_model_collect(&a->m, &a->st);
    *flags |= tui_model_take_partials(&a->m, &a->st);
    /* Keys: also after a timeout or EINTR, so a SIGWINCH that raced the poll is seen. */
    *flags |= read_keys(a, &t->key_time, &t->pending_keys);
    if (t->pending_keys && !(*flags & TUI_REDRAW)) trace_keys(a, t, 0);
    return 0;
}

/* The dashboard until q (or a flag no file uses: its message, returned; else NULL). */
static const char *run_loop(app *a)
{
    unsigned flags = TUI_REDRAW | TUI_RELAYOUT;
    turn_state t = { 0, 0, 0 };
    struct pollfd fds[4];
    fds[0].fd = key_tty ? fileno(key_tty) : STDIN_FILENO;
    fds[0].events = POLLIN;
    fds[1].fd = cs_backend_wake_fd(a->backend);
    fds[1].events = POLLIN;
    fds[2].fd = a->st.follow ? tui_trend_fd(&a->trend) : -1;   /* poll ignores -1 */
    fds[2].events = POLLIN;
    fds[3].fd = cont_pipe[0];                                  /* a SIGCONT (on_sigcont) */
    fds[3].events = POLLIN;
    while (!(flags & TUI_QUIT)) {
        /* Settings changes need no flag here: tui_model_submit compares what each place needs
         * with what it has, so only the results that depend on the change are computed again. */
        flags &= ~(unsigned)(TUI_RECOMPUTE | TUI_CURVES | TUI_PROMPT | TUI_RELOAD);
        sync_classes(a);
        const char *unused = unused_flag(a);
        if (unused) return unused;
        if (a->st.follow) flags |= tui_trend_step(&a->trend, &a->m, &a->st);
        if (tui_model_submit(&a->m, &a->st) > 0) flags |= TUI_REDRAW;
        int busy;
        if (take_progress(a, t.last_draw, &busy)) flags |= TUI_REDRAW;
        if (flags & TUI_REDRAW) {
            draw(a);
            t.last_draw = now_s();
            trace_keys(a, &t, t.last_draw - t.key_time);
            flags = 0;
        }
        if (wait_and_take(a, fds, busy, &t, &flags) < 0) break;
    }
    return NULL;
}

/* Leaves curses at once (the terminal is back), then stops every job. A job that does not
 * stop within CS_BACKEND_QUIT_WAIT_MS (one inside a long engine call with no cancel point) is
 * left to the process exit, with the datasets it reads: freeing them under it would be a
 * crash. */
static void finish(app *a)
{
    endwin();
    delscreen(screen);
    if (key_tty) fclose(key_tty);
    if (a->trace) fclose(a->trace);
    if (cs_backend_shutdown(a->backend, CS_BACKEND_QUIT_WAIT_MS)) {
        cs_backend_free(a->backend);
        tui_model_free(&a->m);
        if (a->st.follow) tui_trend_close(&a->trend);
    }
}

int tui_main(int argc, char **argv)
{
    static app A;
    app *a = &A;
    tui_state_init(&a->st);
    ss_opts o;
    memset(&o, 0, sizeof o);
    int rc = ss_parse(argc, argv, SS_DASH, &o);
    if (rc == 0) tui_state_from_opts(&a->st, &o);
    ss_opts_free(&o);                             /* the paths are argv's */
    if (rc) return rc == SS_EXIT_HELP ? 0 : rc;
    rc = open_terminal(&a->st);
    if (rc >= 0) return rc;
    a->g = ch_glyphs_pick(a->st.ascii);          /* setlocale(LC_CTYPE, "") happens here */
    const char *tr = getenv("CALSCOPE_TRACE");
    if (tr && tr[0]) a->trace = fopen(tr, "w");
    /* Before any thread or load starts: the loader's SIGBUS guard, installed while a file is
     * mapped, hands on a SIGBUS that is not its own to the handler it found, so that handler
     * must be this one already (installed later, it would replace the guard mid-load). Before
     * newterm too, which then leaves SIGINT and SIGTERM to it. */
    catch_fatal_signals();
    if ((rc = start_engine(a)) != 0 || (rc = start_curses(a)) != 0) return rc;
    catch_sigcont();
    const char *unused = run_loop(a);
    finish(a);
    return unused ? ss_usage_error(SS_DASH, "%s", unused) : 0;
}
