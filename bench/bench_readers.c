/* calscope: number readers measured side by side (`make bench-readers`; the figures are in
 * docs/performance.md).
 *
 *   bench_readers [-n ROUNDS] FILE.csv [ROWS]
 *
 * The report's last speed lever is a vector number reader. Before one goes into the loader (whose every
 * bit is checked against strtod), this program times candidate readers of the same numbers in
 * memory: the probabilities of the first ROWS (default 20,000) data rows of a plain file (a
 * one-digit label, then K probabilities, LF line ends; bench/gen_data writes such files). Every
 * reader that makes values must give the doubles of today's reader (A) bit for bit, or the
 * program says where they differ and exits 1; then ROUNDS (default 30) rounds run the readers in
 * turn, and the best time of each is printed in ns a number and as a ratio to A's.
 *   A  today's reader, csl_quick_prob_at (load_qnum.h): each number says where the next starts
 *   S  A's walk alone (the fraction's digit run, the exponent skipped), no value made
 *   B  separators first: an SSE2 mask of each 64 bytes, their positions into an array, then each
 *      field read with its end known (SSE2 fraction, Clinger's step)
 *   I  two rows read in one loop: two independent walks
 *   W  everything in AVX-512 lanes (F, BW, DQ, VL, VBMI2; left out on a CPU without them): 1-4
 *      fields per 64-byte window, their fractions in one 512-bit register, the frame (integer
 *      digit, point, exponent, separators, the line's end) checked as mask arithmetic, the exact
 *      value made on 4 lanes
 * Run it on one core (the make target pins it). Timing never fails the program. Nothing here is
 * used by calscope itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/load/load_qnum.h"

#if defined(__x86_64__) && defined(__GNUC__) && defined(__SSE2__) && \
    defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HAVE_X86 1
#include <immintrin.h>
#else
#define HAVE_X86 0
#endif

typedef struct rows {
    const char *buf;       /* the data rows, then 128 zero bytes (the readers load past a field) */
    size_t len, n, k;      /* bytes of rows, rows, probabilities a row */
} rows;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Each reader fills out[row * k + j] and returns how many rows it read, or 0 when a row is not
 * what it takes (the message says which). */
typedef size_t (*reader_fn)(const rows *r, double *out);

static size_t refuse(const char *who, size_t row)
{
    fprintf(stderr, "bench_readers: reader %s declines data row %zu (a field of a shape it does not read; "
            "the readers are measured on probabilities as %%.12g writes them)\n", who, row + 1);
    return 0;
}

/* ---- A: today's reader ---------------------------------------------------------------------- */

static size_t read_a(const rows *r, double *out)
{
    const char *p = r->buf, *end = r->buf + r->len;
    size_t n = 0;
    for (; p < end; n++) {
        const char *q = p + 1;                     /* the label's one digit, then its comma */
        for (size_t j = 0; j < r->k; j++) {
            double x;
            const char *e = csl_quick_prob_at(q + 1, CSL_SCAN_SSE2, &x);
            if (!e || *e != (j + 1 == r->k ? '\n' : ',')) return refuse("A", n);
            out[n * r->k + j] = x;
            q = e;
        }
        p = q + 1;
    }
    return n;
}

/* ---- S: A's walk alone --------------------------------------------------------------------- */

static size_t read_s(const rows *r, double *out)
{
    const char *p = r->buf, *end = r->buf + r->len;
    size_t n = 0;
    for (; p < end; n++) {
        const char *q = p + 1;
        for (size_t j = 0; j < r->k; j++) {
            const char *f = q + 2;                 /* after the integer digit */
            unsigned len = 0;
            uint64_t v = 0;
            long e10 = 0;
            if (*f == '.') {
                if (!csl_frac_run(f + 1, CSL_SCAN_SSE2, &len, &v)) return refuse("S", n);
                f += 1 + len;
            }
            if (!csl_exp_at(&f, &e10) || *f != (j + 1 == r->k ? '\n' : ',')) return refuse("S", n);
            out[n * r->k + j] = (double)(v + (uint64_t)e10);   /* keeps the work; not a value */
            q = f;
        }
        p = q + 1;
    }
    return n;
}

/* ---- I: two rows in one loop --------------------------------------------------------------- */

static size_t read_i(const rows *r, double *out)
{
    const char *p = r->buf, *end = r->buf + r->len;
    size_t n = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return refuse("I", n);
        const char *p2 = nl + 1;
        const char *q = p + 1, *q2 = p2 + 1;
        int two = p2 < end;
        double *o1 = out + n * r->k, *o2 = o1 + r->k;
        for (size_t j = 0; j < r->k; j++) {
            char want = j + 1 == r->k ? '\n' : ',';
            double x = 0, y = 0;
            const char *e = csl_quick_prob_at(q + 1, CSL_SCAN_SSE2, &x);
            const char *e2 = two ? csl_quick_prob_at(q2 + 1, CSL_SCAN_SSE2, &y) : q2;
            if (!e || *e != want || !e2 || (two && *e2 != want)) return refuse("I", n);
            o1[j] = x;
            if (two) o2[j] = y;
            q = e;
            q2 = e2;
        }
        n += 1 + (size_t)two;
        p = two ? q2 + 1 : q + 1;
    }
    return n;
}

#if HAVE_X86
/* ---- B: separators first ------------------------------------------------------------------- */

/* The field [s, e) as d.ddd[e(+|-)dd], its end known: 1 with *out, else 0. The fraction's digit
 * run (csl_digits_sse2) must end where the field's end says, and the exponent (csl_exp_at) at the
 * end itself. */
static inline int field_prob(const char *s, const char *e, double *out)
{
    unsigned ip = (unsigned)(unsigned char)s[0] - '0', n;
    uint64_t frac;
    const char *fe = e - s >= 7 && (e[-4] | 0x20) == 'e' ? e - 4 : e;
    if (ip >= 10 || s[1] != '.' || !csl_digits_sse2(s + 2, &n, &frac) || n == 0 || s + 2 + n != fe)
        return 0;
    long e10 = -(long)n;
    if (!csl_exp_at(&fe, &e10) || fe != e) return 0;
    return csl_exact(ip * csl_pow10_u64[n] + frac, e10, out);
}

static size_t flatten(uint32_t *ix, size_t base, uint64_t m, size_t at)
{
    for (; m; m &= m - 1) ix[at++] = (uint32_t)(base + (size_t)__builtin_ctzll(m));
    return at;
}

static uint32_t *sep_index;   /* read_b's positions, len / 2 + 64 of them */

static size_t read_b(const rows *r, double *out)
{
    const __m128i comma = _mm_set1_epi8(','), lf = _mm_set1_epi8('\n');
    size_t ni = 0;
    for (size_t b = 0; b < r->len; b += 64) {
        uint64_t m = 0;
        for (int i = 0; i < 4; i++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(r->buf + b + 16 * i));
            m |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, comma),
                                                                    _mm_cmpeq_epi8(v, lf))) << (16 * i);
        }
        if (r->len - b < 64) m &= (1ull << (r->len - b)) - 1;
        ni = flatten(sep_index, b, m, ni);
    }
    size_t n = 0, i = 0;
    const char *p = r->buf;
    for (; i + r->k + 1 <= ni; n++, i += r->k + 1) {
        const char *q = p + 1;
        if (r->buf + sep_index[i] != q) return refuse("B", n);
        for (size_t j = 0; j < r->k; j++) {
            const char *e = r->buf + sep_index[i + 1 + j];
            if (!field_prob(q + 1, e, &out[n * r->k + j]) || *e != (j + 1 == r->k ? '\n' : ','))
                return refuse("B", n);
            q = e;
        }
        p = q + 1;
    }
    return n;
}

/* ---- W: everything in AVX-512 lanes -------------------------------------------------------- */

#define W_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi2,bmi,bmi2,popcnt")))

static const uint64_t w_lanes[5] = {0, 0xffffull, 0xffffffffull, 0xffffffffffffull, ~0ull};
static const double w_pow10[24] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e22,
};

/* The k probabilities after the comma at q into v: the row's LF, or NULL for a row it does not
 * take. Per window of 64 bytes from the first field not read yet: its separators give the next
 * c (1-4) fields; a field must be d.ddd (at most 15 fraction digits) or d.ddde(+|-)dd, 3 to 17
 * bytes. Lane i holds the 16 bytes after field i's point: the run of digits there must end at
 * the field's separator, or at an 'e' followed by a sign, two digits and the separator. Then
 * the digits' value V = D * 10^(16 - r) (maddubs, madd, packus, madd, mul_epu32) gives the
 * fraction D exactly ((V >> (16 - r)) * 5^-(16 - r) mod 2^64), m = I * 10^r + D, and when
 * m <= 2^53 and 10^-e10 <= 10^22, one division rounds as strtod does (Clinger). */
W_TARGET static const char *w_row(const char *q, size_t k, double *v)
{
    const char *a = q + 1;
    const __m512i zero = _mm512_setzero_si512(), c0 = _mm512_set1_epi8('0'), nine = _mm512_set1_epi8(9);
    const __m512i inv_lo = _mm512_loadu_si512(csl_inv5), inv_hi = _mm512_loadu_si512(csl_inv5 + 8);
    const __m512i pu_lo = _mm512_loadu_si512(csl_pow10_u64), pu_hi = _mm512_loadu_si512(csl_pow10_u64 + 8);
    const __m512d pd_lo = _mm512_loadu_pd(w_pow10), pd_hi = _mm512_loadu_pd(w_pow10 + 8),
                  pd_top = _mm512_loadu_pd(w_pow10 + 16);
    for (size_t j = 0; j < k;) {
        __m512i win = _mm512_loadu_si512(a);
        uint64_t nlm = _mm512_cmpeq_epi8_mask(win, _mm512_set1_epi8('\n'));
        uint64_t sep = _mm512_cmpeq_epi8_mask(win, _mm512_set1_epi8(',')) | nlm;
        unsigned avail = (unsigned)__builtin_popcountll(sep);
        unsigned c = avail < 4 ? avail : 4, left = (unsigned)(k - j < 4 ? k - j : 4);
        c = c < left ? c : left;
        if (!c) return NULL;
        uint64_t m = sep;
        unsigned e[4];
        for (int i = 0; i < 4; i++) {
            e[i] = (unsigned)__builtin_ctzll(m | (1ull << 63));
            m &= m - 1;
        }
        /* lanes past c: a dummy field of 3 bytes at a, masked out below */
        unsigned v1 = -(unsigned)(c > 1), v2 = -(unsigned)(c > 2), v3 = -(unsigned)(c > 3);
        unsigned s1 = (e[0] + 1) & v1, s2 = (e[1] + 1) & v2, s3 = (e[2] + 1) & v3;
        unsigned L0 = e[0], L1 = ((e[1] - s1) & v1) | (~v1 & 3u), L2 = ((e[2] - s2) & v2) | (~v2 & 3u),
                 L3 = ((e[3] - s3) & v3) | (~v3 & 3u);
        unsigned el = e[c - 1];
        if ((L0 - 3u > 14u) | (L1 - 3u > 14u) | (L2 - 3u > 14u) | (L3 - 3u > 14u)) return NULL;
        uint64_t lv = w_lanes[c], ones = 0x0001000100010001ull & lv;
        uint64_t sb = ((1ull << (L0 - 2)) | (1ull << (16 + L1 - 2)) | (1ull << (32 + L2 - 2)) |
                       (1ull << (48 + L3 - 2))) & lv;        /* each separator, in lane terms */
        uint64_t starts = 1ull | (1ull << s1) | (1ull << s2) | (1ull << s3);
        uint64_t seps = sep & (~0ull >> (63 - el));
        uint64_t want_nl = (uint64_t)(j + c == k) << el;
        uint64_t wd = _mm512_cmple_epu8_mask(_mm512_sub_epi8(win, c0), nine);
        uint64_t wp = _mm512_cmpeq_epi8_mask(win, _mm512_set1_epi8('.'));
        if ((starts & ~wd) | ((starts << 1) & ~wp) | ((seps & nlm) ^ want_nl)) return NULL;
        __m512i x = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(const void *)(a + 2)));
        x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(const void *)(a + s1 + 2)), 1);
        x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(const void *)(a + s2 + 2)), 2);
        x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(const void *)(a + s3 + 2)), 3);
        __m512i d = _mm512_sub_epi8(x, c0);
        uint64_t dig = _mm512_cmple_epu8_mask(d, nine);
        uint64_t ise = _mm512_cmpeq_epi8_mask(_mm512_or_si512(x, _mm512_set1_epi8(0x20)), _mm512_set1_epi8('e'));
        uint64_t iss = _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('-')) |
                       _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('+'));
        uint64_t keep = dig & ~(dig + ones) & lv;             /* each lane's leading digits */
        uint64_t run_end = (keep + ones) & lv;
        uint64_t ex = run_end & ise, plain = run_end & ~ise;
        if (((plain | (ex << 4)) ^ sb) | (run_end & ones) | ((ex << 1) & ~iss) | ((ex << 2) & ~dig) |
            ((ex << 3) & ~dig) | (ex & 0xF000F000F000F000ull))
            return NULL;
        __m512i t = _mm512_maddubs_epi16(_mm512_maskz_mov_epi8(keep, d), _mm512_set1_epi16(0x010a));
        t = _mm512_madd_epi16(t, _mm512_set1_epi32(0x00010064));
        t = _mm512_packus_epi32(t, t);
        t = _mm512_madd_epi16(t, _mm512_set1_epi32(0x00012710));
        __m512i big = _mm512_add_epi64(_mm512_mul_epu32(t, _mm512_set1_epi64(100000000)), _mm512_srli_epi64(t, 32));
        __m512i r = _mm512_sad_epu8(_mm512_maskz_set1_epi8(keep, 1), zero);
        r = _mm512_add_epi64(r, _mm512_shuffle_epi32(r, (_MM_PERM_ENUM)0x4e));   /* run length */
        /* the exponent's bytes: its digits at r + 2 and r + 3, the sign at r + 1, 'e' at r */
        __m512i g = _mm512_shuffle_epi8(x, _mm512_add_epi8(_mm512_shuffle_epi8(r, zero),
                                                           _mm512_set1_epi32(0x00010302)));
        __m512i ev = _mm512_and_si512(_mm512_maddubs_epi16(_mm512_sub_epi8(g, c0), _mm512_set1_epi16(0x010a)),
                                      _mm512_set1_epi64(0xffff));
        __mmask8 neg = _mm512_cmpeq_epi64_mask(_mm512_and_si512(g, _mm512_set1_epi64(0xff0000)),
                                               _mm512_set1_epi64((long long)'-' << 16));
        __mmask8 has_e = _mm512_cmpeq_epi64_mask(
            _mm512_and_si512(_mm512_or_si512(g, _mm512_set1_epi64(0x20000000)), _mm512_set1_epi64(0xff000000)),
            _mm512_set1_epi64((long long)'e' << 24));
        /* lane i's qword 0 to qword i */
        big = _mm512_maskz_compress_epi64(0x55, big);
        r = _mm512_maskz_compress_epi64(0x55, r);
        ev = _mm512_maskz_compress_epi64(0x55, ev);
        neg = (__mmask8)_pext_u32(neg, 0x55);
        has_e = (__mmask8)_pext_u32(has_e, 0x55);
        __m512i ip = _mm512_sub_epi64(_mm512_cvtepu8_epi64(_mm512_castsi512_si128(_mm512_maskz_compress_epi8(starts, win))),
                                      _mm512_set1_epi64('0'));
        __m512i kk = _mm512_sub_epi64(_mm512_set1_epi64(16), r);
        __m512i frac = _mm512_mullo_epi64(_mm512_srlv_epi64(big, kk), _mm512_permutex2var_epi64(inv_lo, kk, inv_hi));
        __m512i mant = _mm512_add_epi64(_mm512_mullo_epi64(ip, _mm512_permutex2var_epi64(pu_lo, r, pu_hi)), frac);
        __m512i e10 = _mm512_sub_epi64(_mm512_maskz_mov_epi64(has_e, _mm512_mask_sub_epi64(ev, neg, zero, ev)), r);
        __mmask8 lanes = (__mmask8)((1u << c) - 1);
        __m512i ne = _mm512_sub_epi64(zero, e10);
        __mmask8 ok = _mm512_mask_cmple_epu64_mask(lanes, mant, _mm512_set1_epi64(1ll << 53)) &
                      _mm512_mask_cmple_epu64_mask(lanes, ne, _mm512_set1_epi64(22));
        if (ok != lanes) return NULL;
        __m512d p10 = _mm512_permutex2var_pd(pd_lo, ne, pd_hi);
        p10 = _mm512_mask_permutexvar_pd(p10, _mm512_cmpge_epu64_mask(ne, _mm512_set1_epi64(16)), ne, pd_top);
        __m512d val = _mm512_div_pd(_mm512_cvtepu64_pd(mant), p10);
        _mm512_mask_storeu_pd(v + j, lanes, val);
        j += c;
        a += el + 1;
    }
    return a - 1;
}

W_TARGET static size_t read_w(const rows *r, double *out)
{
    const char *p = r->buf, *end = r->buf + r->len;
    size_t n = 0;
    for (; p < end; n++) {
        const char *e = w_row(p + 1, r->k, out + n * r->k);
        if (!e) return refuse("W", n);
        p = e + 1;
    }
    return n;
}

static int have_w(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("bmi2");
}
#endif

/* The first `want` data rows of path, checked to be a one-digit label and k probabilities. */
static int load_rows(const char *path, size_t want, rows *r)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return -1; }
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap + 128), line[65536];
    if (!buf) { fclose(f); return -1; }
    if (!fgets(line, sizeof line, f)) { fprintf(stderr, "%s: empty\n", path); fclose(f); free(buf); return -1; }
    if (strncmp(line, "label,", 6) != 0) {
        fprintf(stderr, "%s:1: the first column is not 'label' (bench_readers reads plain files: the "
                "label, then the probabilities)\n", path);
        fclose(f);
        free(buf);
        return -1;
    }
    size_t k = 0;
    for (const char *c = line; *c; c++) k += *c == ',';
    r->n = 0;
    while (r->n < want && fgets(line, sizeof line, f)) {
        size_t l = strlen(line);
        if (l < 4 || line[l - 1] != '\n' || (unsigned)(line[0] - '0') >= 10u || line[1] != ',') {
            fprintf(stderr, "%s:%zu: not a one-digit label then probabilities, LF-ended\n", path, r->n + 2);
            fclose(f);
            free(buf);
            return -1;
        }
        if (len + l > cap) {
            char *nb = realloc(buf, 2 * cap + 128);
            if (!nb) { fclose(f); free(buf); return -1; }
            buf = nb;
            cap *= 2;
        }
        memcpy(buf + len, line, l);
        len += l;
        r->n++;
    }
    fclose(f);
    memset(buf + len, 0, 128);
    r->buf = buf;
    r->len = len;
    r->k = k;
    return r->n && k ? 0 : -1;
}

int main(int argc, char **argv)
{
    int rounds = 30, a = 1;
    if (argc > 2 && strcmp(argv[1], "-n") == 0) { rounds = atoi(argv[2]); a = 3; }
    if (argc - a < 1 || argc - a > 2 || rounds < 1) {
        fprintf(stderr, "usage: bench_readers [-n ROUNDS] FILE.csv [ROWS]\n");
        return 2;
    }
    rows r;
    if (load_rows(argv[a], argc - a == 2 ? (size_t)strtoul(argv[a + 1], NULL, 10) : 20000, &r)) return 2;
    struct { const char *name; reader_fn fn; int makes_values; double best; } rd[] = {
        {"A", read_a, 1, 1e300}, {"S", read_s, 0, 1e300}, {"I", read_i, 1, 1e300},
#if HAVE_X86
        {"B", read_b, 1, 1e300}, {"W", read_w, 1, 1e300},
#endif
    };
    size_t nr = sizeof rd / sizeof rd[0], total = r.n * r.k;
#if HAVE_X86
    if (!have_w()) nr--;                              /* W is last */
    if (!(sep_index = malloc((r.len / 2 + 64) * sizeof *sep_index))) return 2;
#endif
    double *want = malloc(total * sizeof *want), *got = malloc(total * sizeof *got);
    if (!want || !got) return 2;
    if (read_a(&r, want) != r.n) return 1;
    for (size_t i = 1; i < nr; i++) {
        memset(got, 0, total * sizeof *got);
        if (rd[i].fn(&r, got) != r.n) return 1;
        for (size_t j = 0; rd[i].makes_values && j < total; j++)
            if (memcmp(&got[j], &want[j], sizeof *got)) {
                fprintf(stderr, "bench_readers: reader %s: row %zu, probability %zu: %.17g, A reads %.17g\n",
                        rd[i].name, j / r.k + 1, j % r.k, got[j], want[j]);
                return 1;
            }
    }
    for (int round = 0; round < rounds; round++)
        for (size_t i = 0; i < nr; i++) {
            double t0 = now();
            rd[i].fn(&r, got);
            double t = now() - t0;
            if (t < rd[i].best) rd[i].best = t;
        }
    printf("bench_readers: %s, %zu rows x %zu probabilities, best of %d rounds; every reader's doubles\n"
           "equal A's bit for bit (S makes none)\n", argv[a], r.n, r.k, rounds);
    printf("reader  ns/number  vs A\n");
    for (size_t i = 0; i < nr; i++)
        printf("%-6s  %9.2f  %4.2f\n", rd[i].name, rd[i].best / (double)total * 1e9, rd[i].best / rd[0].best);
#if HAVE_X86
    if (nr < sizeof rd / sizeof rd[0]) printf("(W left out: this CPU lacks AVX-512 F/BW/DQ/VL/VBMI2)\n");
#endif
    free(want);
    free(got);
    free((void *)r.buf);
    return 0;
}
