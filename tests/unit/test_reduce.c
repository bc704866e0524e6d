/* Segmentation volumes to statistics (calscope/reduce.h): the mapping flags, the manifest and
 * folder plans, every refusal with its message verbatim, and the streamed sums against the
 * tests' reference accumulation (support/seg_kernel.h: all channels of a voxel at once, an
 * independent accumulation order) on random cases written as .npy files here. */
#include "support/cs_test.h"
#include "support/seg_data.h"
#include "support/seg_kernel.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "calscope/reduce.h"
#include "calscope/thread.h"
#include "engine/num/ubin.h"
#include "engine/reduce/reduce_internal.h"

/* ---- files ------------------------------------------------------------------------------- */

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_reduce.XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* dir/name; static storage for a few live paths. */
static const char *at(const char *name)
{
    static char buf[8][256];
    static int i;
    char *b = buf[i++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", dir, name);
    return b;
}

static void write_text(const char *name, const char *text)
{
    FILE *f = fopen(at(name), "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A C-order .npy: descr '<f8', '<f4', '<f2' (values 0, 0.25, 0.5, 0.75, 1 only) or '<i4';
 * shape given as numpy writes it (slowest first). */
static void write_npy(const char *name, const char *descr, const long *shape, int nd, const double *v)
{
    char hdr[256];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    size_t count = 1;
    for (int i = 0; i < nd; i++) {
        n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%ld,%s", shape[i], i + 1 < nd ? " " : "");
        count *= (size_t)shape[i];
    }
    n += snprintf(hdr + n, sizeof hdr - (size_t)n, "), }");
    while ((10 + n + 1) % 64) hdr[n++] = ' ';
    hdr[n++] = '\n';
    FILE *f = fopen(at(name), "wb");
    assert_non_null(f);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    unsigned char hl[2] = { (unsigned char)(n & 0xff), (unsigned char)(n >> 8) };
    fwrite(hl, 1, 2, f);
    fwrite(hdr, 1, (size_t)n, f);
    for (size_t i = 0; i < count; i++) {
        if (strcmp(descr, "<f8") == 0) fwrite(&v[i], 8, 1, f);
        else if (strcmp(descr, "<f4") == 0) { float x = (float)v[i]; fwrite(&x, 4, 1, f); }
        else if (strcmp(descr, "<i4") == 0) { int32_t x = (int32_t)v[i]; fwrite(&x, 4, 1, f); }
        else {
            uint16_t h = v[i] == 0 ? 0 : v[i] == 0.25 ? 0x3400 : v[i] == 0.5 ? 0x3800 : v[i] == 0.75 ? 0x3A00 : 0x3C00;
            fwrite(&h, 2, 1, f);
        }
    }
    fclose(f);
}

/* One case of V voxels in a row: probabilities (C, 1, V) and labels (1, V). */
static void write_case(const char *probs, const char *labels, const char *descr, size_t C, size_t V,
                       const double *p, const double *lab)
{
    long ps[3] = { (long)C, 1, (long)V }, ls[2] = { 1, (long)V };
    write_npy(probs, descr, ps, 3, p);
    write_npy(labels, "<i4", ls, 2, lab);
}

static cs_seg_plan *manifest(const char *text)
{
    write_text("m.csv", text);
    cs_seg_plan *p = NULL;
    cs_error err;
    cs_error_clear(&err);
    if (cs_seg_plan_manifest(at("m.csv"), &p, &err) != CS_OK) fail_msg("%s", err.msg);
    return p;
}

/* Reduces the manifest with --sum-tol tol (< 0: the default); returns the status, err filled. */
static cs_status reduce_tol(const char *text, const cs_seg_mapping *m, int threads, double tol, cs_segstats **out,
                            cs_error *err)
{
    cs_seg_plan *p = manifest(text);
    cs_reduce_options o;
    cs_reduce_options_default(&o);
    o.mapping = m;
    if (tol >= 0) o.sum_tol = tol;
    cs_run run = { .threads = threads, .cancel = NULL, .progress_ppm = NULL };
    cs_error_clear(err);
    cs_status s = cs_reduce_run(p, &o, &run, out, err);
    cs_seg_plan_free(p);
    return s;
}

static cs_status reduce(const char *text, const cs_seg_mapping *m, int threads, cs_segstats **out, cs_error *err)
{
    return reduce_tol(text, m, threads, -1, out, err);
}

/* The message of a refused reduction (--sum-tol tol, < 0: the default), with "DIR/" removed for
 * readable expectations. */
static const char *refusal_tol(const char *text, const cs_seg_mapping *m, double tol)
{
    static char msg[1024];
    cs_segstats *st = NULL;
    cs_error err;
    assert_int_equal(reduce_tol(text, m, 1, tol, &st, &err), CS_EINPUT);
    assert_null(st);
    char *o = msg;
    size_t dl = strlen(dir);
    for (const char *s = err.msg; *s;) {
        if (strncmp(s, dir, dl) == 0 && s[dl] == '/') { s += dl + 1; continue; }
        *o++ = *s++;
    }
    *o = '\0';
    return msg;
}

static const char *refusal(const char *text, const cs_seg_mapping *m)
{
    return refusal_tol(text, m, -1);
}

/* ---- the mapping ------------------------------------------------------------------------- */

static void expect_usage(cs_status (*fn)(const char *, cs_seg_mapping **, cs_error *), const char *text, const char *want)
{
    cs_seg_mapping *m = NULL;
    cs_error err;
    cs_error_clear(&err);
    assert_int_equal(fn(text, &m, &err), CS_EUSAGE);
    assert_null(m);
    assert_string_equal(err.msg, want);
}

static void test_label_values(void **state)
{
    (void)state;
    cs_seg_mapping *m = NULL;
    cs_error err;
    assert_int_equal(cs_seg_mapping_values("4,0,1,2", &m, &err), CS_OK);
    assert_int_equal(m->kind, CS_SEG_SOFTMAX);
    assert_int_equal(m->k, 4);
    assert_string_equal(m->names[0], "4");
    assert_string_equal(m->names[3], "2");
    assert_string_equal(m->text, "4,0,1,2");
    /* codes follow the sorted values; class_of maps them back to channels */
    assert_int_equal(cs_seg_mapping_code(m, 0.0), 0);
    assert_int_equal(cs_seg_mapping_code(m, 4.0), 3);
    assert_int_equal(m->class_of[3], 0);
    assert_int_equal(m->class_of[0], 1);
    assert_int_equal(cs_seg_mapping_code(m, 3.0), -1);
    assert_int_equal(cs_seg_mapping_code(m, 1.5), -1);
    assert_int_equal(cs_seg_mapping_code(m, NAN), -1);
    assert_int_equal(cs_seg_mapping_code(m, 1e300), -1);
    char d[128];
    cs_seg_mapping_describe(m, d, sizeof d);
    assert_string_equal(d, "--label-values 4,0,1,2");
    cs_seg_mapping_free(m);

    assert_int_equal(cs_seg_mapping_values("bg=0,NCR=1,ED=2,ET=4", &m, &err), CS_OK);
    assert_string_equal(m->names[3], "ET");
    assert_string_equal(m->text, "bg=0,NCR=1,ED=2,ET=4");
    cs_seg_mapping_free(m);

    expect_usage(cs_seg_mapping_values, "0,x,2", "--label-values: 'x' is not an integer label value (in '0,x,2')");
    expect_usage(cs_seg_mapping_values, "0,,2", "--label-values: '' is not an integer label value (in '0,,2')");
    expect_usage(cs_seg_mapping_values, "0,1,1", "--label-values: value 1 is given twice (in '0,1,1')");
    expect_usage(cs_seg_mapping_values, "a=0,b=1.5", "--label-values: 'b=1.5' is not an integer label value after NAME= (in 'a=0,b=1.5')");
    expect_usage(cs_seg_mapping_values, "=3", "--label-values: '=3' has no usable class name before '='");
    expect_usage(cs_seg_mapping_values, "a=0,a=1", "--label-values: class name 'a' is given twice");

    m = cs_seg_mapping_default(3);
    assert_non_null(m);
    assert_string_equal(m->text, "0,1,2");
    assert_string_equal(m->names[2], "2");
    cs_seg_mapping_describe(m, d, sizeof d);
    assert_string_equal(d, "the default 0,1,2 (from the first case's channel count)");
    cs_seg_mapping_free(m);
}

static void test_regions(void **state)
{
    (void)state;
    cs_seg_mapping *m = NULL;
    cs_error err;
    assert_int_equal(cs_seg_mapping_regions("WT=1,2,4;TC=1,4;ET=4", &m, &err), CS_OK);
    assert_int_equal(m->kind, CS_SEG_REGIONS);
    assert_int_equal(m->k, 3);
    assert_string_equal(m->names[1], "TC");
    assert_string_equal(m->text, "WT=1,2,4;TC=1,4;ET=4");
    /* codes: 0 (background), 1, 2, 4 */
    assert_int_equal(m->n_values, 4);
    long c2 = cs_seg_mapping_code(m, 2), c4 = cs_seg_mapping_code(m, 4), c0 = cs_seg_mapping_code(m, 0);
    assert_int_equal(c0, 0);
    const uint8_t want2[3] = { 1, 0, 0 }, want4[3] = { 1, 1, 1 }, want0[3] = { 0, 0, 0 };
    assert_memory_equal(m->member + (size_t)c2 * 3, want2, 3);
    assert_memory_equal(m->member + (size_t)c4 * 3, want4, 3);
    assert_memory_equal(m->member + (size_t)c0 * 3, want0, 3);
    assert_int_equal(cs_seg_mapping_code(m, 3), -1);
    cs_seg_mapping_free(m);

    expect_usage(cs_seg_mapping_regions, "WT", "--regions: 'WT' is not NAME=VALUE,VALUE,... (in 'WT')");
    expect_usage(cs_seg_mapping_regions, "WT=1,x", "--regions: 'x' is not an integer label value (region 'WT' in 'WT=1,x')");
    expect_usage(cs_seg_mapping_regions, "WT=1;;ET=4", "--regions: '' is not NAME=VALUE,VALUE,... (in 'WT=1;;ET=4')");
    expect_usage(cs_seg_mapping_regions, "A=1;A=2", "--regions: region 'A' is given twice");
    expect_usage(cs_seg_mapping_regions, "A=1,1", "--regions: value 1 is given twice in region 'A'");
    expect_usage(cs_seg_mapping_regions, "A=", "--regions: '' is not an integer label value (region 'A' in 'A=')");
}

/* ---- plans ------------------------------------------------------------------------------- */

/* want with {M} as the manifest's path and {D} as the test folder. */
static const char *expand(const char *want)
{
    static char out[1024];
    size_t n = 0;
    for (const char *w = want; *w && n + 256 < sizeof out;) {
        const char *rep = strncmp(w, "{M}", 3) == 0 ? at("m.csv") : strncmp(w, "{D}", 3) == 0 ? dir : NULL;
        if (rep) {
            n += (size_t)snprintf(out + n, sizeof out - n, "%s", rep);
            w += 3;
        } else {
            out[n++] = *w++;
        }
    }
    out[n] = '\0';
    return out;
}

static void expect_manifest_error(const char *text, const char *want)
{
    write_text("m.csv", text);
    cs_seg_plan *p = NULL;
    cs_error err;
    cs_error_clear(&err);
    assert_int_equal(cs_seg_plan_manifest(at("m.csv"), &p, &err), CS_EINPUT);
    assert_null(p);
    assert_string_equal(err.msg, expand(want));
}

static void test_manifest(void **state)
{
    (void)state;
    make_dir();
    write_text("b p.npy", "x");
    write_text("b.npy", "x");
    write_text("a,p.npy", "x");
    write_text("a.npy", "x");
    /* BOM, semicolons, CRLF, a quoted name with the delimiter... no: a comma in a quoted
     * field, a blank line; the cases come out sorted by name */
    cs_seg_plan *p = manifest("\xEF\xBB\xBF" "Case,PROBS,labels\r\nb , b p.npy, b.npy\r\n\r\n\"a\",\"a,p.npy\",a.npy\r\n");
    assert_int_equal(p->n, 2);
    assert_string_equal(p->cases[0].name, "a");
    assert_string_equal(p->cases[0].probs, at("a,p.npy"));
    assert_string_equal(p->cases[0].probs_rec, "a,p.npy");
    assert_string_equal(p->cases[1].labels, at("b.npy"));
    assert_string_equal(p->cases[1].probs_rec, "b p.npy");
    assert_int_equal(p->cases[1].probs_size, 1);
    cs_seg_plan_free(p);
    p = manifest("case;probs;labels\nb;b.npy;b.npy\n");
    assert_int_equal(p->n, 1);
    cs_seg_plan_free(p);
    assert_int_equal(cs_seg_manifest_sniff(at("m.csv")), 1);

    expect_manifest_error("case,probs\na,a.npy\n", "{M}:1:1: not a manifest: the header must be case,probs,labels");
    assert_int_equal(cs_seg_manifest_sniff(at("m.csv")), 0);
    expect_manifest_error("case,probs,labels\na,a.npy\n", "{M}:2:3: missing field 'labels' (the header is case,probs,labels)");
    expect_manifest_error("case,probs,labels\na,a.npy,a.npy,x\n", "{M}:2:4: 4 fields, the header has 3 (case,probs,labels)");
    expect_manifest_error("case,probs,labels\na,,a.npy\n", "{M}:2:2: empty 'probs'");
    expect_manifest_error("case,probs,labels\na,a.npy,a.npy\nb,b.npy,b.npy\n\na,b.npy,b.npy\n", "{M}:5:1: case 'a' is already on line 2");
    expect_manifest_error("case,probs,labels\na,a.npy,nope.npy\n", "{M}:2:3: labels '{D}/nope.npy': No such file or directory");
    expect_manifest_error("case,probs,labels\n", "{M}:2: no case (a manifest lists case,probs,labels rows)");
    expect_manifest_error("case,probs,labels\na,\"a.npy,a.npy\n", "{M}:2: a quoted field is not closed");
    remove_dir();
}

static cs_status folders(const char *suffix, cs_seg_plan **p, cs_error *err)
{
    char pd[128], ld[128];
    snprintf(pd, sizeof pd, "%s/P", dir);
    snprintf(ld, sizeof ld, "%s/L", dir);
    cs_error_clear(err);
    return cs_seg_plan_folders(pd, ld, suffix, p, err);
}

static void expect_folders_error(const char *suffix, const char *want)
{
    cs_seg_plan *p = NULL;
    cs_error err;
    assert_int_equal(folders(suffix, &p, &err), CS_EINPUT);
    assert_string_equal(err.msg, expand(want));
}

static void test_folders(void **state)
{
    (void)state;
    make_dir();
    assert_int_equal(mkdir(at("P"), 0700), 0);
    assert_int_equal(mkdir(at("L"), 0700), 0);
    write_text("P/c2_prob.nii.gz", "x");
    write_text("P/c1_prob.npz", "x");
    write_text("P/c1.pkl", "x");            /* not an array file: ignored */
    write_text("L/c1.nii.gz", "x");
    write_text("L/c2.nii", "x");
    write_text("L/notes.json", "x");
    cs_seg_plan *p = NULL;
    cs_error err;
    assert_int_equal(folders("_prob", &p, &err), CS_OK);
    assert_int_equal(p->n, 2);
    assert_string_equal(p->cases[0].name, "c1");
    assert_string_equal(p->cases[0].probs, at("P/c1_prob.npz"));
    assert_string_equal(p->cases[1].labels, at("L/c2.nii"));
    cs_seg_plan_free(p);

    write_text("L/c3.npy", "x");
    expect_folders_error("_prob", "case 'c3': {D}/L/c3.npy has no probability file c3_prob.* in {D}/P");
    unlink(at("L/c3.npy"));
    write_text("P/c0_prob.npy", "x");
    expect_folders_error("_prob", "case 'c0': {D}/P/c0_prob.npy has no label file c0.* in {D}/L");
    unlink(at("P/c0_prob.npy"));
    write_text("P/c1_prob.nii", "x");
    expect_folders_error("_prob", "{D}/P/c1_prob.nii and {D}/P/c1_prob.npz have the same stem 'c1' (--prob-suffix with an extension, e.g. .npz, picks one)");
    unlink(at("P/c1_prob.nii"));

    /* nnU-Net: CASE.npz beside CASE.nii.gz in one folder; --prob-suffix .npz picks the npz */
    unlink(at("P/c1_prob.npz"));
    unlink(at("P/c2_prob.nii.gz"));
    unlink(at("L/c1.nii.gz"));
    unlink(at("L/c2.nii"));
    write_text("P/c3.npz", "x");
    write_text("P/c3.nii.gz", "x");
    write_text("L/c3.nii.gz", "x");
    if (folders(".npz", &p, &err) != CS_OK) fail_msg("%s", err.msg);
    assert_int_equal(p->n, 1);
    assert_string_equal(p->cases[0].probs, at("P/c3.npz"));
    cs_seg_plan_free(p);
    expect_folders_error(".nii", "{D}/P: no probability file (CASE.nii)");
    expect_folders_error("_x", "{D}/P: no probability file (CASE_x with .nii, .nii.gz, .npz or .npy)");

    assert_int_equal(cs_seg_plan_folders(at("P"), at("P/"), "", &p, &err), CS_EUSAGE);
    remove_dir();
}

/* ---- the reduction ----------------------------------------------------------------------- */

/* Writes g's cases as c00.npy/l00.npy ... (float64) and returns the manifest text. */
static char *write_cases(const cs_test_seg *g)
{
    size_t N = g->first[g->n_cases], cap = 64 + 64 * g->n_cases;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t n = (size_t)snprintf(text, cap, "case,probs,labels\n");
    for (size_t c = g->n_cases; c-- > 0;) {   /* written in reverse: the plan sorts */
        size_t a = g->first[c], V = g->first[c + 1] - a;
        double *p = malloc(g->k * V * sizeof *p), *l = malloc(V * sizeof *l);
        assert_non_null(p);
        assert_non_null(l);
        for (size_t j = 0; j < g->k; j++)
            for (size_t v = 0; v < V; v++) p[j * V + v] = g->p[j * N + a + v];
        for (size_t v = 0; v < V; v++) l[v] = g->lab[a + v];
        char pn[32], ln[32];
        snprintf(pn, sizeof pn, "p%02zu.npy", c);
        snprintf(ln, sizeof ln, "l%02zu.npy", c);
        write_case(pn, ln, "<f8", g->k, V, p, l);
        n += (size_t)snprintf(text + n, cap - n, "%s,%s,%s\n", cs_test_seg_case_name(c), pn, ln);
        free(p);
        free(l);
    }
    return text;
}

static void same_sums(const cs_segstats *a, const cs_segstats *b)
{
    assert_int_equal(a->n_cases, b->n_cases);
    assert_int_equal(a->k, b->k);
    size_t nb = a->n_cases * a->k * (size_t)a->fine, nt = a->n_cases * (size_t)a->fine, ns = a->n_cases * a->k;
    assert_memory_equal(a->voxels, b->voxels, a->n_cases * sizeof *a->voxels);
    assert_memory_equal(a->cnt, b->cnt, nb * sizeof *a->cnt);
    assert_memory_equal(a->sum_y, b->sum_y, nb * sizeof *a->sum_y);
    assert_memory_equal(a->t_cnt, b->t_cnt, nt * sizeof *a->t_cnt);
    assert_memory_equal(a->t_sum_correct, b->t_sum_correct, nt * sizeof *a->t_sum_correct);
    for (size_t i = 0; i < nb; i++) assert_double_rel(a->sum_p[i], b->sum_p[i], 1e-12, 1e-12);
    for (size_t i = 0; i < nt; i++) assert_double_rel(a->t_sum_conf[i], b->t_sum_conf[i], 1e-12, 1e-12);
    for (size_t i = 0; i < ns; i++) {
        assert_double_rel(a->sq_err[i], b->sq_err[i], 1e-12, 1e-12);
        assert_double_rel(a->nll_pos[i], b->nll_pos[i], 1e-12, 1e-12);
        assert_double_rel(a->nll_neg[i], b->nll_neg[i], 1e-12, 1e-12);
    }
}

/* The streamed sums equal the reference accumulation's on the same voxels; 1 and 3 threads give the same bits;
 * progress ends at 1e6 and every case is flagged done. */
static void test_sums_match_the_kernel(void **state)
{
    (void)state;
    make_dir();
    cs_test_seg *g = cs_test_seg_random(5, 3, 300, 7, 0);
    char *text = write_cases(g);
    cs_segstats *want = cs_test_seg_stats(g, CS_SEGSTATS_FINE_DEFAULT);
    cs_seg_plan *p = manifest(text);
    cs_reduce_options o;
    cs_reduce_options_default(&o);
    atomic_uchar done[5] = { 0 };
    o.done = done;
    atomic_int ppm = 0;
    cs_run run = { .threads = 1, .cancel = NULL, .progress_ppm = &ppm };
    cs_segstats *one = NULL, *three = NULL;
    cs_error err;
    cs_error_clear(&err);
    if (cs_reduce_run(p, &o, &run, &one, &err) != CS_OK) fail_msg("%s", err.msg);
    assert_int_equal(atomic_load(&ppm), 1000000);
    for (int c = 0; c < 5; c++) assert_int_equal(done[c], 1);
    run.threads = 3;
    assert_int_equal(cs_reduce_run(p, &o, &run, &three, &err), CS_OK);
    same_sums(one, want);
    size_t nb = one->n_cases * one->k * (size_t)one->fine;
    assert_memory_equal(one->sum_p, three->sum_p, nb * sizeof *one->sum_p);
    assert_memory_equal(one->nll_pos, three->nll_pos, one->n_cases * one->k * sizeof *one->nll_pos);
    assert_string_equal(one->case_names[0], "case00");
    assert_string_equal(one->probs_in[2].path, "p02.npy");
    assert_string_equal(one->mapping, "0,1,2");
    assert_int_equal(one->voxels[1], 305);
    cs_segstats_free(one);
    cs_segstats_free(three);
    cs_segstats_free(want);
    cs_seg_plan_free(p);
    free(text);
    cs_test_seg_free(g);
    remove_dir();
}

/* The memory budget and the helper thread: cases larger than a slab (two a channel) reduced on 3
 * threads with a budget of 1 byte (so one case at a time, each read by a helper thread a slab
 * ahead) give the same bits as 1 thread, and the reference accumulation's sums. */
static void test_budget_and_helper(void **state)
{
    (void)state;
    make_dir();
    cs_test_seg *g = cs_test_seg_random(3, 3, CS_REDUCE_SLAB + 1000, 11, 0);
    char *text = write_cases(g);
    cs_segstats *want = cs_test_seg_stats(g, CS_SEGSTATS_FINE_DEFAULT);
    cs_seg_plan *p = manifest(text);
    cs_reduce_options o;
    cs_reduce_options_default(&o);
    atomic_uchar done[3] = { 0 };
    o.done = done;
    atomic_int ppm = 0;
    cs_run run = { .threads = 1, .cancel = NULL, .progress_ppm = &ppm };
    cs_segstats *one = NULL, *serial = NULL;
    cs_error err;
    cs_error_clear(&err);
    if (cs_reduce_run(p, &o, &run, &one, &err) != CS_OK) fail_msg("%s", err.msg);
    run.threads = 3;
    o.memory = 1;
    atomic_store(&ppm, 0);
    for (int c = 0; c < 3; c++) atomic_store(&done[c], 0);
    if (cs_reduce_run(p, &o, &run, &serial, &err) != CS_OK) fail_msg("%s", err.msg);
    assert_int_equal(atomic_load(&ppm), 1000000);
    for (int c = 0; c < 3; c++) assert_int_equal(done[c], 1);
    same_sums(one, want);
    size_t nb = one->n_cases * one->k * (size_t)one->fine, nt = one->n_cases * (size_t)one->fine, ns = one->n_cases * one->k;
    assert_memory_equal(one->cnt, serial->cnt, nb * sizeof *one->cnt);
    assert_memory_equal(one->sum_p, serial->sum_p, nb * sizeof *one->sum_p);
    assert_memory_equal(one->sum_y, serial->sum_y, nb * sizeof *one->sum_y);
    assert_memory_equal(one->t_cnt, serial->t_cnt, nt * sizeof *one->t_cnt);
    assert_memory_equal(one->t_sum_conf, serial->t_sum_conf, nt * sizeof *one->t_sum_conf);
    assert_memory_equal(one->t_sum_correct, serial->t_sum_correct, nt * sizeof *one->t_sum_correct);
    assert_memory_equal(one->sq_err, serial->sq_err, ns * sizeof *one->sq_err);
    assert_memory_equal(one->nll_pos, serial->nll_pos, ns * sizeof *one->nll_pos);
    assert_memory_equal(one->nll_neg, serial->nll_neg, ns * sizeof *one->nll_neg);
    cs_segstats_free(one);
    cs_segstats_free(serial);
    cs_segstats_free(want);
    cs_seg_plan_free(p);
    free(text);
    cs_test_seg_free(g);
    remove_dir();
}

/* float16 values on fine edges (0.25 = 75/300, 0.5 = 150/300) fall in the bin they close
 * (right-closed: 74 and 149), as a float64 0.25 does. */
static void test_float16_edges(void **state)
{
    (void)state;
    make_dir();
    const double p[] = { 0.25, 0.5, 0.75, 0.5, 1, 0,   0.75, 0.5, 0.25, 0.5, 0, 1 };
    const double l[] = { 1, 0, 0, 1, 0, 1 };
    write_case("p.npy", "l.npy", "<f2", 2, 6, p, l);
    cs_segstats *st = NULL;
    cs_error err;
    if (reduce("case,probs,labels\nx,p.npy,l.npy\n", NULL, 1, &st, &err) != CS_OK) fail_msg("%s", err.msg);
    assert_int_equal(st->cnt[cs_segstats_ci(st, 0, 0, 74)], 1);    /* channel 0: 0.25 */
    assert_int_equal(st->cnt[cs_segstats_ci(st, 0, 0, 149)], 2);   /* 0.5 twice */
    assert_int_equal(st->cnt[cs_segstats_ci(st, 0, 0, 224)], 1);   /* 0.75 */
    assert_int_equal(st->cnt[cs_segstats_ci(st, 0, 0, 299)], 1);   /* 1 */
    assert_int_equal(st->cnt[cs_segstats_ci(st, 0, 0, 0)], 1);     /* 0 */
    assert_int_equal(st->cnt[cs_segstats_ci(st, 0, 1, 74)], 1);    /* channel 1: 0.25 at label 0 */
    assert_int_equal(st->sum_y[cs_segstats_ci(st, 0, 1, 74)], 0);
    assert_int_equal(st->sum_y[cs_segstats_ci(st, 0, 1, 224)], 1); /* 0.75 at label 1 */
    /* top-1: 0.75 (channel 1, right), 0.5 (a tie: channel 0, right), 0.75 (right), 0.5 (a
     * tie: channel 0, label 1: wrong), 1 (right), 1 (right) */
    assert_int_equal(st->t_cnt[cs_segstats_ti(st, 0, 149)], 2);
    assert_int_equal(st->t_cnt[cs_segstats_ti(st, 0, 224)], 2);
    assert_int_equal(st->t_cnt[cs_segstats_ti(st, 0, 299)], 2);
    assert_int_equal(st->t_sum_correct[cs_segstats_ti(st, 0, 149)], 1);
    assert_int_equal(st->t_sum_correct[cs_segstats_ti(st, 0, 224)], 2);
    assert_double_near(st->t_sum_conf[cs_segstats_ti(st, 0, 224)], 1.5, 0);
    cs_segstats_free(st);
    remove_dir();
}

static void test_refusals(void **state)
{
    (void)state;
    make_dir();
    const double good[] = { 0.2, 0.5, 1, 0.8, 0.5, 0 };
    const double lab[] = { 0, 1, 0 };
    write_case("good.npy", "lab.npy", "<f4", 2, 3, good, lab);
#define M "case,probs,labels\nx,%s,%s\n"
    char text[256];

    /* shapes: 4 voxels of probabilities against 3 labels */
    const double four[] = { 0, 0, 0, 0, 1, 1, 1, 1 };
    write_case("four.npy", "unused.npy", "<f4", 2, 4, four, four);
    snprintf(text, sizeof text, M, "four.npy", "lab.npy");
    assert_string_equal(refusal(text, NULL), "four.npy and lab.npy: spatial shapes differ: 4 (2 channels) vs 3 (fastest axis first)");

    /* the channel count against the mapping */
    cs_seg_mapping *m = NULL;
    cs_error err;
    assert_int_equal(cs_seg_mapping_values("0,1,2,4", &m, &err), CS_OK);
    snprintf(text, sizeof text, M, "good.npy", "lab.npy");
    assert_string_equal(refusal(text, m), "good.npy: 2 channels, but --label-values 0,1,2,4 has 4 classes (labels: lab.npy)");
    cs_seg_mapping_free(m);

    /* a later case whose channel count differs from the first's (the default mapping) */
    const double three[] = { 0.2, 0.5, 1, 0.8, 0.5, 0, 0, 0, 0 };
    write_case("three.npy", "unused.npy", "<f4", 3, 3, three, lab);
    char two[256];
    snprintf(two, sizeof two, "case,probs,labels\nx,good.npy,lab.npy\ny,three.npy,lab.npy\n");
    assert_string_equal(refusal(two, NULL),
                        "three.npy: 3 channels, but the default 0,1 (from the first case's channel count) has 2 classes (labels: lab.npy)");

    /* a probability outside [0,1], named by voxel and channel */
    const double high[] = { 0.2, 0.5, 1, 0.8, 1.25, 0 };
    write_case("high.npy", "unused.npy", "<f8", 2, 3, high, lab);
    snprintf(text, sizeof text, M, "high.npy", "lab.npy");
    assert_string_equal(refusal(text, NULL), "high.npy: probability 1.25 outside [0,1] at voxel 1, channel 1 (labels: lab.npy)");
    const double nan_[] = { 0.2, NAN, 1, 0.8, 0.5, 0 };
    write_case("nan.npy", "unused.npy", "<f8", 2, 3, nan_, lab);
    snprintf(text, sizeof text, M, "nan.npy", "lab.npy");
    assert_string_equal(refusal(text, NULL), "nan.npy: probability nan outside [0,1] at voxel 1, channel 0 (labels: lab.npy)");

    /* softmax sums: float64 and float16 (the message explains float16's rounding) */
    const double off[] = { 0.2, 0.5, 1, 0.8, 0.502, 0 };
    write_case("off.npy", "unused.npy", "<f8", 2, 3, off, lab);
    snprintf(text, sizeof text, M, "off.npy", "lab.npy");
    assert_string_equal(refusal(text, NULL), "off.npy: probabilities sum to 1.002, not 1 within 0.001 at voxel 1 (labels: lab.npy)");
    const double h[] = { 0.25, 0.5, 1, 0.75, 0.75, 0 };
    write_case("half.npy", "unused.npy", "<f2", 2, 3, h, lab);
    snprintf(text, sizeof text, M, "half.npy", "lab.npy");
    assert_string_equal(refusal(text, NULL), "half.npy: probabilities sum to 1.25, not 1 within 0.001 at voxel 1; float16 rounds each "
                        "value to ~5e-4 (up to 2.4e-4 off), so 2 channels may miss 1 by up to 0.00049: raise --sum-tol (labels: lab.npy)");

    /* a label value the mapping does not have */
    const double bad_lab[] = { 0, 1, 3 };
    write_case("unused.npy", "lab3.npy", "<f4", 2, 3, good, bad_lab);
    snprintf(text, sizeof text, M, "good.npy", "lab3.npy");
    assert_string_equal(refusal(text, NULL),
                        "lab3.npy: label value 3 at voxel 2 is not in the default 0,1 (from the first case's channel count) (probabilities: good.npy)");
    assert_int_equal(cs_seg_mapping_regions("A=1", &m, &err), CS_OK);
    const double one_ch[] = { 0.2, 0.5, 1 };
    write_case("r.npy", "unused.npy", "<f4", 1, 3, one_ch, lab);
    snprintf(text, sizeof text, M, "r.npy", "lab3.npy");
    assert_string_equal(refusal(text, m), "lab3.npy: label value 3 at voxel 2 is not in --regions 'A=1' and not 0 (probabilities: r.npy)");
    cs_seg_mapping_free(m);
    /* values beyond the table of 0..255 the labels are looked up in: the mapping's own search */
    const double far_lab[] = { 0, 300, 1 }, neg_lab[] = { 0, 1, -1 };
    write_case("unused.npy", "lab300.npy", "<f4", 2, 3, good, far_lab);
    write_case("unused.npy", "labneg.npy", "<f4", 2, 3, good, neg_lab);
    snprintf(text, sizeof text, M, "good.npy", "lab300.npy");
    assert_string_equal(refusal(text, NULL),
                        "lab300.npy: label value 300 at voxel 1 is not in the default 0,1 (from the first case's channel count) (probabilities: good.npy)");
    assert_int_equal(cs_seg_mapping_values("1,300", &m, &err), CS_OK);
    snprintf(text, sizeof text, M, "good.npy", "labneg.npy");
    assert_string_equal(refusal(text, m), "labneg.npy: label value 0 at voxel 0 is not in --label-values 1,300 (probabilities: good.npy)");
    const double big_lab[] = { 1, 300, 300 };
    write_case("unused.npy", "labbig.npy", "<f4", 2, 3, good, big_lab);
    snprintf(text, sizeof text, M, "good.npy", "labbig.npy");
    cs_segstats *st = NULL;
    assert_int_equal(reduce_tol(text, m, 1, -1, &st, &err), CS_OK);
    uint64_t y300 = 0;
    for (int b = 0; b < st->fine; b++) y300 += st->sum_y[cs_segstats_ci(st, 0, 1, (size_t)b)];
    assert_int_equal(y300, 2);   /* the two voxels labelled 300 are class 1's */
    cs_segstats_free(st);
    cs_seg_mapping_free(m);
    assert_int_equal(cs_seg_mapping_values("0,1", &m, &err), CS_OK);
    snprintf(text, sizeof text, M, "good.npy", "labneg.npy");
    assert_string_equal(refusal(text, m), "labneg.npy: label value -1 at voxel 2 is not in --label-values 0,1 (probabilities: good.npy)");
    cs_seg_mapping_free(m);

    /* a truncated file: the reader's message and the other file */
    FILE *f = fopen(at("good.npy"), "rb");
    assert_non_null(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    f = fopen(at("cut.npy"), "wb");
    fwrite(buf, 1, n - 6, f);
    fclose(f);
    snprintf(text, sizeof text, M, "cut.npy", "lab.npy");
    const char *msg = refusal(text, NULL);
    if (!strstr(msg, "cut.npy") || !strstr(msg, " (labels: lab.npy)")) fail_msg("%s", msg);
    remove_dir();
#undef M
}

/* ---- a file that changes while its case is read ------------------------------------------ */

enum { CHANGE_NONE, CHANGE_TOUCH, CHANGE_TRUNCATE, CHANGE_REPLACE };

typedef struct change {
    const char *path;
    int action;
    int calls;
} change;

/* The case hook: changes the file after the case's last read, before the check. TOUCH moves
 * the modification time on (an in-place rewrite of the same size, whatever the file system's
 * clock granularity), TRUNCATE cuts the file, REPLACE writes a new file and renames it over. */
static void change_file(void *arg, size_t ci)
{
    change *c = arg;
    (void)ci;
    c->calls++;
    struct stat sb;
    assert_int_equal(stat(c->path, &sb), 0);
    if (c->action == CHANGE_TOUCH) {
        struct timespec t[2] = { sb.st_atim, sb.st_mtim };
        t[1].tv_sec += 7;
        assert_int_equal(utimensat(AT_FDCWD, c->path, t, 0), 0);
    } else if (c->action == CHANGE_TRUNCATE) {
        assert_int_equal(truncate(c->path, sb.st_size - 1), 0);
    } else if (c->action == CHANGE_REPLACE) {
        char tmp[300], cmd[700];
        snprintf(tmp, sizeof tmp, "%s.new", c->path);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s' && mv '%s' '%s'", c->path, tmp, tmp, c->path);
        assert_int_equal(system(cmd), 0);
    }
}

/* A failed assertion leaves the hook set: the later tests run without it. */
static int clear_hook(void **state)
{
    (void)state;
    rd_case_hook_set(NULL, NULL);
    return 0;
}

/* Either file of a case changed between its open and the end of its reads (touched, truncated,
 * replaced under its name) is refused with "FILE: file changed while loading", as the CSV
 * loader refuses such a file, on 1 or 2 threads (the case read by a helper thread); an
 * unchanged case under the same hook is reduced. */
static void test_changed_while_read(void **state)
{
    (void)state;
    make_dir();
    const double good[] = { 0.2, 0.5, 1, 0.8, 0.5, 0 };
    const double lab[] = { 0, 1, 0 };
    const char *text = "case,probs,labels\nx,good.npy,lab.npy\n";
    for (int which = 0; which < 2; which++)
        for (int action = CHANGE_TOUCH; action <= CHANGE_REPLACE; action++)
            for (int threads = 1; threads <= 2; threads++) {
                write_case("good.npy", "lab.npy", "<f4", 2, 3, good, lab);
                change c = { .path = at(which ? "lab.npy" : "good.npy"), .action = action };
                rd_case_hook_set(change_file, &c);
                cs_segstats *st = NULL;
                cs_error err;
                assert_int_equal(reduce(text, NULL, threads, &st, &err), CS_EINPUT);
                rd_case_hook_set(NULL, NULL);
                assert_null(st);
                assert_int_equal(c.calls, 1);
                char want[600];
                if (which) snprintf(want, sizeof want, "%s: file changed while loading (probabilities: %s)", at("lab.npy"), at("good.npy"));
                else snprintf(want, sizeof want, "%s: file changed while loading (labels: %s)", at("good.npy"), at("lab.npy"));
                assert_string_equal(err.msg, want);
            }
    write_case("good.npy", "lab.npy", "<f4", 2, 3, good, lab);
    change none = { .path = at("good.npy"), .action = CHANGE_NONE };
    rd_case_hook_set(change_file, &none);
    cs_segstats *st = NULL;
    cs_error err;
    if (reduce(text, NULL, 2, &st, &err) != CS_OK) fail_msg("%s", err.msg);
    rd_case_hook_set(NULL, NULL);
    assert_int_equal(none.calls, 1);
    assert_int_equal(st->voxels[0], 3);
    cs_segstats_free(st);
    remove_dir();
}

/* Two failing cases: the first in plan order is reported, with 1 or 4 threads; cancel. */
static void test_first_error_and_cancel(void **state)
{
    (void)state;
    make_dir();
    const double good[] = { 0.2, 0.5, 1, 0.8, 0.5, 0 }, high[] = { 0.2, 0.5, 1, 0.8, 1.5, 0 };
    const double lab[] = { 0, 1, 0 };
    write_case("good.npy", "lab.npy", "<f4", 2, 3, good, lab);
    write_case("high.npy", "unused.npy", "<f4", 2, 3, high, lab);
    const char *text = "case,probs,labels\na,good.npy,lab.npy\nb,high.npy,lab.npy\nc,good.npy,lab.npy\nd,nope.npy,lab.npy\n";
    write_text("nope.npy", "not an array");
    for (int t = 1; t <= 4; t += 3) {
        cs_segstats *st = NULL;
        cs_error err;
        assert_int_equal(reduce(text, NULL, t, &st, &err), CS_EINPUT);
        if (!strstr(err.msg, "high.npy: probability 1.5 outside")) fail_msg("%s", err.msg);
    }
    /* one case at a time (a budget of 1 byte): the cases after the failing one stop waiting */
    cs_seg_plan *p1 = manifest(text);
    cs_reduce_options o1;
    cs_reduce_options_default(&o1);
    o1.memory = 1;
    cs_run run4 = { .threads = 4, .cancel = NULL, .progress_ppm = NULL };
    cs_segstats *st1 = NULL;
    cs_error err1;
    cs_error_clear(&err1);
    assert_int_equal(cs_reduce_run(p1, &o1, &run4, &st1, &err1), CS_EINPUT);
    if (!strstr(err1.msg, "high.npy: probability 1.5 outside")) fail_msg("%s", err1.msg);
    cs_seg_plan_free(p1);
    cs_seg_plan *p = manifest("case,probs,labels\na,good.npy,lab.npy\n");
    cs_reduce_options o;
    cs_reduce_options_default(&o);
    atomic_int cancel = 1;
    cs_run run = { .threads = 2, .cancel = &cancel, .progress_ppm = NULL };
    cs_segstats *st = NULL;
    cs_error err;
    assert_int_equal(cs_reduce_run(p, &o, &run, &st, &err), CS_ECANCELLED);
    assert_null(st);
    o.fine = 0;
    assert_int_equal(cs_reduce_run(p, &o, &run, &st, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "--fine: 0 is not in 1..100000");
    cs_seg_plan_free(p);
    remove_dir();
}
/* The sum check decides on the double sum in channel order (the CSV loader's row sum), though
 * the reducer keeps a 16-bit (or float) running sum: float32 voxels whose double and float sums fall on
 * either side of the 1e-3 edge (found with numpy) are accepted / refused as the double sum says,
 * with its digits; a refusal is found in a later window of the exact check; --sum-tol 0 checks
 * every voxel exactly. The sums of an accepted case equal the reference accumulation's (float32
 * values: the running max is a float; 17 classes: codes and argmaxes not packed). */
static void test_sum_check_at_the_edge(void **state)
{
    (void)state;
    make_dir();
    const double t = 0x1p-25;
    /* voxel 0 and 2: double sums 0.99900001287 (pass), float sums 0.99899995327 (would fail) */
    double ok[] = { 0.5, 0.2, 0.75, 1,   0.4989999830722809, 0.3, 0.24899998307228088, 0,   t, 0.5, t, 0 };
    const double lab[] = { 0, 1, 2, 0 };
    write_case("ok.npy", "lab.npy", "<f4", 3, 4, ok, lab);
    cs_segstats *st = NULL;
    cs_error err;
    if (reduce("case,probs,labels\nx,ok.npy,lab.npy\n", NULL, 1, &st, &err) != CS_OK) fail_msg("%s", err.msg);
    cs_segstats *want = cs_segstats_new(CS_SEGSTATS_FINE_DEFAULT, CS_SEG_SOFTMAX, 3, (const char *const[]){ "0", "1", "2" }, "0,1,2", 1);
    assert_non_null(want);
    double pf[12];
    for (int i = 0; i < 12; i++) pf[i] = (float)ok[i];
    const double *planes[3] = { pf, pf + 4, pf + 8 };
    const int32_t li[4] = { 0, 1, 2, 0 };
    cs_test_seg_add_voxels(want, 0, planes, li, NULL, 4);
    same_sums(st, want);
    cs_segstats_free(st);
    cs_segstats_free(want);

    /* voxel 2: double sum 1.001000017 (fails), float sum 1.0009999275 (would pass); voxel 0 is
     * near the edge too, so the exact check's first window (2 voxels) passes, the second fails;
     * float64 values (a double running max, windows of 4) give the same refusal */
    ok[6] = 0.5009999871253967;
    ok[2] = 0.5;
    write_case("bad.npy", "unused.npy", "<f4", 3, 4, ok, lab);
    pf[6] = (float)ok[6];
    pf[2] = 0.5;
    write_case("bad8.npy", "unused.npy", "<f8", 3, 4, pf, lab);
    assert_string_equal(refusal("case,probs,labels\nx,bad.npy,lab.npy\n", NULL),
                        "bad.npy: probabilities sum to 1.001000017, not 1 within 0.001 at voxel 2 (labels: lab.npy)");
    assert_string_equal(refusal("case,probs,labels\nx,bad8.npy,lab.npy\n", NULL),
                        "bad8.npy: probabilities sum to 1.001000017, not 1 within 0.001 at voxel 2 (labels: lab.npy)");
    /* the same on 2 threads: the one case is read by a helper thread, the exact check after it */
    assert_int_equal(reduce("case,probs,labels\nx,bad.npy,lab.npy\n", NULL, 2, &st, &err), CS_EINPUT);
    if (!strstr(err.msg, "bad.npy: probabilities sum to 1.001000017, not 1 within 0.001 at voxel 2 (labels: "))
        fail_msg("%s", err.msg);

    /* --sum-tol 0: exact sums pass, 1 + 2^-25 does not */
    const double exact[] = { 0.25, 0.5, 1, 0,   0.75, 0.5, 0, 0.5,   0, 0, 0, 0.5 };
    write_case("exact.npy", "unused.npy", "<f4", 3, 4, exact, lab);
    assert_int_equal(reduce_tol("case,probs,labels\nx,exact.npy,lab.npy\n", NULL, 1, 0, &st, &err), CS_OK);
    cs_segstats_free(st);
    double over[12];
    memcpy(over, exact, sizeof over);
    over[11] = 0.5 + t;
    write_case("over.npy", "unused.npy", "<f8", 3, 4, over, lab);
    assert_string_equal(refusal_tol("case,probs,labels\nx,over.npy,lab.npy\n", NULL, 0),
                        "over.npy: probabilities sum to 1.00000003, not 1 within 0 at voxel 3 (labels: lab.npy)");

    /* the CSV loader's rule (engine/num/rowsum.h): float64 values written with 3 decimals whose
     * numbers sum to 1.001 (a double sum of 1.0010000000000001) pass the default 1e-3 through
     * the exact check; 1.0015 does not */
    const double dec3[] = { 0.334, 0.5, 1, 0.333,   0.334, 0.5, 0, 0.333,   0.333, 0, 0, 0.333 };
    write_case("dec3.npy", "unused.npy", "<f8", 3, 4, dec3, lab);
    assert_int_equal(reduce("case,probs,labels\nx,dec3.npy,lab.npy\n", NULL, 1, &st, &err), CS_OK);
    cs_segstats_free(st);
    double dec4[12];
    memcpy(dec4, dec3, sizeof dec4);
    dec4[3] = 0.3345;
    dec4[7] = 0.334;
    write_case("dec4.npy", "unused.npy", "<f8", 3, 4, dec4, lab);
    assert_string_equal(refusal("case,probs,labels\nx,dec4.npy,lab.npy\n", NULL),
                        "dec4.npy: probabilities sum to 1.0015, not 1 within 0.001 at voxel 3 (labels: lab.npy)");

    /* the 16-bit running sum (up to 8 classes at the default tolerance) stops at 1.99997: a
     * voxel summing to 3 is refused with --sum-tol 1.5 (its stopped sum would pass), and
     * accepted with 2.5 */
    const double sat[] = { 1, 0.25, 0.5, 0,   1, 0.5, 0.5, 0.5,   1, 0.5, 0, 0.5 };
    write_case("sat.npy", "unused.npy", "<f4", 3, 4, sat, lab);
    assert_string_equal(refusal_tol("case,probs,labels\nx,sat.npy,lab.npy\n", NULL, 1.5),
                        "sat.npy: probabilities sum to 3, not 1 within 1.5 at voxel 0 (labels: lab.npy)");
    assert_int_equal(reduce_tol("case,probs,labels\nx,sat.npy,lab.npy\n", NULL, 1, 2.5, &st, &err), CS_OK);
    cs_segstats_free(st);

    /* 17 classes, float32: each voxel 1 on one channel */
    double wide[17 * 3] = { 0 };
    const double wl[3] = { 16, 3, 5 };
    wide[16 * 3 + 0] = 1;
    wide[3 * 3 + 1] = 0.75;
    wide[4 * 3 + 1] = 0.25;
    wide[16 * 3 + 2] = 1;
    write_case("wide.npy", "wl.npy", "<f4", 17, 3, wide, wl);
    if (reduce("case,probs,labels\nx,wide.npy,wl.npy\n", NULL, 1, &st, &err) != CS_OK) fail_msg("%s", err.msg);
    const char *names[17];
    char nb[17][12];
    for (int j = 0; j < 17; j++) {
        snprintf(nb[j], sizeof nb[j], "%d", j);
        names[j] = nb[j];
    }
    want = cs_segstats_new(CS_SEGSTATS_FINE_DEFAULT, CS_SEG_SOFTMAX, 17, names, "", 1);
    assert_non_null(want);
    const double *wp[17];
    for (int j = 0; j < 17; j++) wp[j] = wide + 3 * j;
    const int32_t wli[3] = { 16, 3, 5 };
    cs_test_seg_add_voxels(want, 0, wp, wli, NULL, 3);
    same_sums(st, want);
    assert_int_equal(st->t_sum_correct[cs_segstats_ti(st, 0, 299)], 1);   /* voxel 0 right, voxel 2 wrong */
    assert_int_equal(st->t_sum_correct[cs_segstats_ti(st, 0, 224)], 1);   /* 0.75 on class 3 */
    cs_segstats_free(st);
    cs_segstats_free(want);
    remove_dir();
}

/* The statistics file of one reduction of `text` (mapping m, budget `memory` bytes) on `threads`,
 * read back as bytes; *helpers: the threads it started (cs_helper_started). */
static unsigned char *reduced_bytes(const char *text, const cs_seg_mapping *m, int threads, uint64_t memory,
                                    size_t *len, size_t *helpers, cs_segstats **keep)
{
    cs_seg_plan *p = manifest(text);
    cs_reduce_options o;
    cs_reduce_options_default(&o);
    o.mapping = m;
    o.memory = memory;
    cs_run run = { .threads = threads, .cancel = NULL, .progress_ppm = NULL };
    cs_segstats *st = NULL;
    cs_error err;
    cs_error_clear(&err);
    size_t before = cs_helper_started();
    if (cs_reduce_run(p, &o, &run, &st, &err) != CS_OK) fail_msg("%s", err.msg);
    *helpers = cs_helper_started() - before;
    if (cs_segstats_write(st, at("out.stats"), &err) != CS_OK) fail_msg("%s", err.msg);
    FILE *f = fopen(at("out.stats"), "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(*len ? *len : 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, *len, f), *len);
    fclose(f);
    cs_seg_plan_free(p);
    if (keep) *keep = st;
    else cs_segstats_free(st);
    return b;
}

/* Cases of many slabs (a test slab of 7 values: a channel of 300-320 voxels spans 43-46, the
 * last one short) give the same statistics file, byte for byte, on 1, 2 and 4 threads, with the
 * default budget (cases side by side, some read by a helper thread) and with a budget of 1
 * byte (one case at a time, each read by a helper thread that also scores the slabs the
 * consumer gives back); softmax (with the reference accumulation's sums) and regions. With one
 * case at a time the threads are counted: 1 thread starts none; T threads start T - 1 workers
 * and one reader per case. */
static void test_threads_give_the_same_bytes(void **state)
{
    (void)state;
    make_dir();
    const size_t n = 5;
    cs_test_seg *g = cs_test_seg_random(n, 3, 300, 23, 0);
    char *text = write_cases(g);
    cs_segstats *want = cs_test_seg_stats(g, CS_SEGSTATS_FINE_DEFAULT);
    cs_seg_mapping *regions = NULL;
    cs_error err;
    assert_int_equal(cs_seg_mapping_regions("A=1;B=1,2;C=2", &regions, &err), CS_OK);
    rd_slab_set(7);
    const cs_seg_mapping *maps[2] = { NULL, regions };
    for (int mi = 0; mi < 2; mi++) {
        size_t len1, helpers;
        cs_segstats *st = NULL;
        unsigned char *one = reduced_bytes(text, maps[mi], 1, CS_REDUCE_MEMORY_DEFAULT, &len1, &helpers, &st);
        assert_int_equal(helpers, 0);
        if (!maps[mi]) same_sums(st, want);
        cs_segstats_free(st);
        const int threads[] = { 2, 4 };
        for (int ti = 0; ti < 2; ti++)
            for (int alone = 0; alone < 2; alone++) {
                size_t len;
                unsigned char *b = reduced_bytes(text, maps[mi], threads[ti], alone ? 1 : CS_REDUCE_MEMORY_DEFAULT, &len,
                                                 &helpers, NULL);
                assert_int_equal(len, len1);
                assert_memory_equal(b, one, len1);
                if (alone) assert_int_equal(helpers, (size_t)(threads[ti] - 1) + n);
                free(b);
            }
        free(one);
    }
    rd_slab_set(0);
    cs_seg_mapping_free(regions);
    cs_segstats_free(want);
    free(text);
    cs_test_seg_free(g);
    remove_dir();
}


/* ---- the lanes (lanes.c) ------------------------------------------------------------------ */

/* The tests' random numbers: xorshift64 (Marsaglia 2003), one call a statement. */
static uint64_t xorshift(uint64_t *r)
{
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    return *r;
}

/* One float32 case of V voxels and 4 channels whose values make every branch of the channel pass
 * go both ways: runs of one class (as a segmentation's regions), ties for the max (values in
 * steps of 1/8), values on and beside the fine edges (the float nearest k/300 and its
 * neighbours), 0 and 1, maps summing to 1 in float noise and one a little off (the 16-bit sum's
 * rounding both ways). Labels 0..3. */
static void write_lane_case(const char *probs, const char *labels, size_t V, unsigned seed)
{
    double *p = malloc(4 * V * sizeof *p), *l = malloc(V * sizeof *l);
    assert_non_null(p);
    assert_non_null(l);
    uint64_t r = seed * 0x9E3779B97F4A7C15ull + 1;
    int cls = 0;
    for (size_t v = 0; v < V; v++) {
        if (xorshift(&r) % 50 == 0) cls = (int)(xorshift(&r) % 4);          /* a new run */
        l[v] = xorshift(&r) % 20 == 0 ? (double)(xorshift(&r) % 4) : cls;
        double q[4], s = 0;
        int kind = (int)(xorshift(&r) % 4);
        for (int j = 0; j < 4; j++) {
            if (kind == 0) q[j] = (double)(xorshift(&r) % 9) / 8.0;                     /* ties */
            else if (kind == 1) {                                                 /* at an edge */
                float e = (float)((double)(xorshift(&r) % 301) / 300.0);
                int side = (int)(xorshift(&r) % 3);
                q[j] = side == 0 ? e : side == 1 ? nextafterf(e, 0.0f) : nextafterf(e, 1.0f);
            } else q[j] = exp(3.0 * ((double)(xorshift(&r) % 1000) / 1000.0 - 0.5) + (j == cls ? 2.0 : 0.0));
            s += q[j];
        }
        for (int j = 0; j < 4; j++) {
            double x = s > 0 ? q[j] / s : 0.25;
            if (kind == 3 && j == 0) x *= 1.0 + 1e-4;                            /* a little off */
            if (x > 1.0) x = 1.0;
            p[(size_t)j * V + v] = (double)(float)x;
        }
    }
    long ps[3] = { 4, 1, (long)V }, ls[2] = { 1, (long)V };
    write_npy(probs, "<f4", ps, 3, p);
    write_npy(labels, "<i4", ls, 2, l);
    free(p);
    free(l);
}

/* The channel pass in lanes gives the bytes it gives without them, softmax and regions, for
 * slabs that end the blocks at every remainder of 4 and 16, on 1 and 2 threads. */
static void test_lanes_give_the_same_bytes(void **state)
{
    (void)state;
    if (!rd_lanes_available()) {
        skip();   /* the CPU has no AVX2: no lanes to compare */
    }
    make_dir();
    write_lane_case("p0.npy", "l0.npy", 7001, 1);
    write_lane_case("p1.npy", "l1.npy", 3333, 2);
    const char *text = "case,probs,labels\nc0,p0.npy,l0.npy\nc1,p1.npy,l1.npy\n";
    cs_seg_mapping *soft = NULL, *regions = NULL;
    cs_error err;
    assert_int_equal(cs_seg_mapping_values("0,1,2,3", &soft, &err), CS_OK);
    assert_int_equal(cs_seg_mapping_regions("A=1;B=1,2;C=2,3;D=3", &regions, &err), CS_OK);
    const cs_seg_mapping *maps[2] = { soft, regions };
    const size_t slabs[3] = { 0, 1001, 37 };
    for (int mi = 0; mi < 2; mi++)
        for (int si = 0; si < 3; si++)
            for (int threads = 1; threads <= 2; threads++) {
                rd_slab_set(slabs[si]);
                size_t with_len, without_len, helpers;
                rd_lanes_allow(0);
                unsigned char *without = reduced_bytes(text, maps[mi], threads, CS_REDUCE_MEMORY_DEFAULT, &without_len,
                                                       &helpers, NULL);
                rd_lanes_allow(1);
                unsigned char *with = reduced_bytes(text, maps[mi], threads, CS_REDUCE_MEMORY_DEFAULT, &with_len,
                                                    &helpers, NULL);
                assert_int_equal(with_len, without_len);
                assert_memory_equal(with, without, with_len);
                free(with);
                free(without);
            }
    /* a value out of [0, 1] in the middle of a block: the same refusal, with the lanes and
     * without */
    const double bad[2] = { 1.25, NAN };
    const char *said[2] = { "bad.npy: probability 1.25 outside [0,1] at voxel 4001, channel 2 (labels: l0.npy)",
                            "bad.npy: probability nan outside [0,1] at voxel 4001, channel 2 (labels: l0.npy)" };
    for (int bi = 0; bi < 2; bi++) {
        size_t V = 7001;
        double *p = malloc(4 * V * sizeof *p);
        assert_non_null(p);
        for (size_t i = 0; i < 4 * V; i++) p[i] = 0.25;
        p[2 * V + 4001] = bad[bi];
        long ps[3] = { 4, 1, (long)V };
        write_npy("bad.npy", "<f4", ps, 3, p);
        free(p);
        for (int on = 0; on < 2; on++) {
            rd_lanes_allow(on);
            assert_string_equal(refusal("case,probs,labels\nc0,bad.npy,l0.npy\n", soft), said[bi]);
        }
    }
    rd_slab_set(0);
    cs_seg_mapping_free(soft);
    cs_seg_mapping_free(regions);
    remove_dir();
}

/* One block in lanes against the channel pass's rules written out value by value: a strictly
 * greater value moves the running max and the argmax nibble (the first channel sets both), the
 * 16-bit sum is s = u·2^-15 + p rounded as trunc(s·32768 + 0.5) and saturates at 65535, y is the
 * code nibble's, and the bin sums are added in voxel order. Random blocks of every length
 * remainder, with ties, half steps of the 16-bit sum and sums at saturation; and a block with a
 * value outside [0, 1] is refused with nothing changed. */
static void test_lanes_block(void **state)
{
    (void)state;
    if (!rd_lanes_available()) skip();
    const int F = 300;
    double edges[301];
    for (int i = 0; i <= F; i++) edges[i] = cs_ubin_edge(i, F);
    uint64_t r = 77;
    static double p[RD_BLOCK];
    static float vmax[RD_BLOCK], wmax[RD_BLOCK];
    static uint16_t vsum[RD_BLOCK], wsum[RD_BLOCK];
    static uint8_t code[RD_BLOCK], wcode[RD_BLOCK], ys[RD_BLOCK];
    for (int trial = 0; trial < 400; trial++) {
        size_t n = trial < 40 ? (size_t)trial + 1 : (size_t)(xorshift(&r) % RD_BLOCK) + 1;
        size_t j = (size_t)(xorshift(&r) % 4);
        uint64_t cnt[300] = { 0 }, sy[300] = { 0 }, wcnt[300] = { 0 }, wsy[300] = { 0 };
        double sp[300] = { 0 }, wsp[300] = { 0 };
        rd_lane_block b = { .p = p, .n = n, .j = j, .code = code, .vmax = vmax, .vsum = vsum, .ys = ys, .edges = edges,
                            .fine = F, .cnt = cnt, .sy = sy, .sp = sp };
        for (int c = 0; c < 16; c++) b.ytab16[c] = (uint8_t)(c % 4 == (int)j);
        for (size_t i = 0; i < n; i++) {
            int kind = (int)(xorshift(&r) % 4);
            vmax[i] = (float)(xorshift(&r) % 1001) / 1000.0f;
            p[i] = kind == 0 ? (double)vmax[i]                                     /* a tie */
                 : kind == 1 ? (double)(xorshift(&r) % 65537) * 0x1p-16                 /* half steps */
                 : (double)(float)((double)(xorshift(&r) % 1000001) / 1e6);
            vsum[i] = kind == 2 ? (uint16_t)(65535 - xorshift(&r) % 40000 % 3) : (uint16_t)(xorshift(&r) % 65536);
            unsigned cl = (unsigned)(xorshift(&r) % 4), am = (unsigned)(xorshift(&r) % 4);
            code[i] = (uint8_t)(cl | am << 4);
            /* the rules, value by value */
            int up = j == 0 || p[i] > (double)vmax[i];
            wmax[i] = up ? (float)p[i] : vmax[i];
            wcode[i] = up ? (uint8_t)((code[i] & 15) | j << 4) : code[i];
            double sum = j ? (double)vsum[i] * 0x1p-15 + p[i] : p[i];
            wsum[i] = sum >= 65535.0 * 0x1p-15 ? 65535 : (uint16_t)(sum * 32768.0 + 0.5);
            int k = cs_ubin_at(p[i], edges, F);
            wcnt[k]++;
            wsp[k] += p[i];
            wsy[k] += b.ytab16[code[i] & 15];
        }
        assert_int_equal(rd_lanes_channel(&b), 1);
        assert_memory_equal(vmax, wmax, n * sizeof *vmax);
        assert_memory_equal(vsum, wsum, n * sizeof *vsum);
        assert_memory_equal(code, wcode, n);
        assert_memory_equal(cnt, wcnt, sizeof cnt);
        assert_memory_equal(sy, wsy, sizeof sy);
        assert_memory_equal(sp, wsp, sizeof sp);
        for (size_t i = 0; i < n; i++) assert_int_equal(ys[i], b.ytab16[wcode[i] & 15]);
    }
    /* out of [0, 1]: refused, nothing changed */
    const double bad[4] = { -0x1p-30, 1.0 + 0x1p-52, NAN, -1.0 };
    for (int bi = 0; bi < 4; bi++) {
        uint64_t cnt[300] = { 0 }, sy[300] = { 0 };
        double sp[300] = { 0 };
        size_t n = 37;
        for (size_t i = 0; i < n; i++) {
            p[i] = 0.5;
            vmax[i] = 0.25f;
            vsum[i] = 100;
            code[i] = 1;
        }
        p[bi * 9 + 3] = bad[bi];
        rd_lane_block b = { .p = p, .n = n, .j = 1, .code = code, .vmax = vmax, .vsum = vsum, .ys = ys, .edges = edges,
                            .fine = F, .cnt = cnt, .sy = sy, .sp = sp };
        assert_int_equal(rd_lanes_channel(&b), 0);
        for (size_t i = 0; i < n; i++) {
            assert_true(vmax[i] == 0.25f);
            assert_int_equal(vsum[i], 100);
            assert_int_equal(code[i], 1);
        }
        for (int k = 0; k < F; k++) assert_int_equal(cnt[k], 0);
    }
}

/* ---- the stream (stream.c) ---------------------------------------------------------------- */

/* What the after stage saw: each slab's part and position in stream order, checked as it comes;
 * never two at once; which thread ran it. */
typedef struct after_log {
    atomic_int running;
    size_t part, C;
    uint64_t pos, V, ran, on_consumer, bad;
    pthread_t consumer;
    const double *p;          /* the case's channels, C x V */
} after_log;

static void log_after(void *arg, size_t part, uint64_t pos, const rd_values *vals, const uint8_t *aux)
{
    after_log *a = arg;
    size_t n = vals->n;
    if (atomic_fetch_add(&a->running, 1) != 0) a->bad++;   /* two after stages at once */
    if (part != a->part || pos != a->pos) a->bad++;          /* out of stream order */
    double block[RD_BLOCK];
    for (size_t i = 0; i < n; i++) {
        uint64_t v = pos + i;
        if (i % RD_BLOCK == 0) rd_values_block(vals, i, block);
        double x = block[i % RD_BLOCK];
        if (aux[i] != (uint8_t)(v * 7 + part)) a->bad++;     /* the consumer's bytes, handed over */
        if (part > 0 && x != a->p[(part - 1) * a->V + v]) a->bad++;
    }
    a->pos += n;
    if (a->pos == a->V) { a->pos = 0; a->part++; }
    a->ran++;
    if (pthread_equal(pthread_self(), a->consumer)) a->on_consumer++;
    atomic_fetch_sub(&a->running, 1);
}

/* A stream read by a helper thread hands the consumer every slab in order, and runs the after
 * stage of every slab once, in stream order, one at a time, with the bytes the consumer wrote —
 * whichever thread runs it: the helper when no slot is free to read into, the consumer when no
 * slab is ready for it (which of the two depends on the scheduler; both hold the same). */
static void test_stream_after_stage(void **state)
{
    (void)state;
    make_dir();
    const size_t C = 3, V = 4000;
    double *p = malloc(C * V * sizeof *p), *l = malloc(V * sizeof *l);
    assert_non_null(p);
    assert_non_null(l);
    for (size_t i = 0; i < C * V; i++) p[i] = (double)((i * 2654435761u) % 1000) / 1000.0;
    for (size_t v = 0; v < V; v++) l[v] = (double)(v % 3);
    write_case("sp.npy", "sl.npy", "<f8", C, V, p, l);
    for (int threaded = 0; threaded < 2; threaded++)
        for (size_t slab = 1; slab <= 64; slab *= 4) {
            cs_vol *lv = NULL, *pv = NULL;
            cs_error err;
            assert_int_equal(cs_vol_open(at("sl.npy"), NULL, &lv, &err), CS_OK);
            assert_int_equal(cs_vol_open(at("sp.npy"), NULL, &pv, &err), CS_OK);
            after_log a = { .C = C, .V = V, .p = p, .consumer = pthread_self() };
            atomic_init(&a.running, 0);
            rd_stream *s = NULL;
            assert_int_equal(rd_stream_open(lv, pv, V, C, slab, threaded, log_after, &a, &s, &err), CS_OK);
            for (size_t part = 0; part <= C; part++)
                for (uint64_t v0 = 0; v0 < V;) {
                    size_t n = V - v0 < slab ? (size_t)(V - v0) : slab;
                    rd_values vals;
                    uint8_t *aux;
                    assert_int_equal(rd_stream_next(s, n, &vals, &aux, &err), CS_OK);
                    assert_int_equal(vals.n, n);
                    double block[RD_BLOCK];
                    for (size_t i = 0; i < n; i++) {
                        if (i % RD_BLOCK == 0) rd_values_block(&vals, i, block);
                        double want = part ? p[(part - 1) * V + v0 + i] : l[v0 + i], x = block[i % RD_BLOCK];
                        assert_true(x == want);
                        aux[i] = (uint8_t)((v0 + i) * 7 + part);
                    }
                    v0 += n;
                }
            rd_stream_close(s, 1);
            assert_int_equal(a.bad, 0);
            assert_int_equal(a.ran, (C + 1) * ((V + slab - 1) / slab));
            assert_int_equal(a.part, C + 1);
            if (!threaded) assert_int_equal(a.on_consumer, a.ran);
            cs_vol_close(lv);
            cs_vol_close(pv);
        }
    free(p);
    free(l);
    remove_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_values),
        cmocka_unit_test(test_regions),
        cmocka_unit_test(test_manifest),
        cmocka_unit_test(test_folders),
        cmocka_unit_test(test_sums_match_the_kernel),
        cmocka_unit_test(test_budget_and_helper),
        cmocka_unit_test(test_float16_edges),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test_teardown(test_changed_while_read, clear_hook),
        cmocka_unit_test(test_first_error_and_cancel),
        cmocka_unit_test(test_sum_check_at_the_edge),
        cmocka_unit_test(test_threads_give_the_same_bytes),
        cmocka_unit_test(test_stream_after_stage),
        cmocka_unit_test(test_lanes_block),
        cmocka_unit_test(test_lanes_give_the_same_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
