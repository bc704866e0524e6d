/* Deterministic generator of a large prediction CSV for `make bench`.
 *
 *   gen_data ROWS CLASSES [SEED [DIGITS [g]]] > preds.csv
 *
 * Writes the header `label,p_0,...,p_{K-1}` then ROWS rows. Each row: a logit vector
 * z_j ~ Normal(0, 2.5) with one random class boosted by 3..9, p = softmax(z) printed with DIGITS
 * (default 6) significant digits in plain decimal (no exponent; below 1e-12 printed as 0), so
 * every row sums to 1 within 1e-6 (1M x 10: about 113 MB). The label is drawn from softmax(0.7 z): the "model" is overconfident, so the
 * file has a visible calibration error. Same arguments, same bytes, on any platform (own PRNG,
 * no libm randomness; exp/log differences could only move the 6th digit in rare ties). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;

static uint64_t splitmix64(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(void) { return (double)(splitmix64() >> 11) * 0x1.0p-53; }

static double normal01(void) {
    double u1 = uniform01(), u2 = uniform01();
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static int digits = 6;
static int g_format;    /* "g" as 5th argument: printf's %.{DIGITS}g, as numpy/pandas writers
                           with float_format="%.12g" write (exponents below 1e-4) */

/* `digits` significant digits, plain decimal (or %g). Returns the length written to buf. */
static int format_sig(char *buf, double p) {
    if (g_format) return snprintf(buf, 40, "%.*g", digits, p);
    if (p < 1e-12) return (int)(memcpy(buf, "0", 2), 1);
    int e = (int)floor(log10(p));          /* p in [10^e, 10^(e+1)) */
    int decimals = digits - 1 - e;
    if (decimals < 0) decimals = 0;
    int n = snprintf(buf, 40, "%.*f", decimals, p);
    /* strip trailing zeros (keep "1" for 1.000000) */
    if (memchr(buf, '.', (size_t)n)) {
        while (n > 1 && buf[n - 1] == '0') buf[--n] = '\0';
        if (buf[n - 1] == '.') buf[--n] = '\0';
    }
    return n;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: gen_data ROWS CLASSES [SEED [DIGITS [g]]] > file.csv\n");
        return 2;
    }
    long rows = strtol(argv[1], NULL, 10);
    int k = atoi(argv[2]);
    rng_state = argc > 3 ? strtoull(argv[3], NULL, 10) : 20261121u;
    if (argc > 4) digits = atoi(argv[4]);
    if (argc > 5) g_format = strcmp(argv[5], "g") == 0;
    if (rows <= 0 || k < 2 || k > 100000 || digits < 1 || digits > 17) {
        fprintf(stderr, "gen_data: bad arguments\n");
        return 2;
    }
    double *z = malloc((size_t)k * sizeof *z), *p = malloc((size_t)k * sizeof *p);
    char *line = malloc((size_t)k * 48 + 64);
    if (!z || !p || !line) return 1;
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);

    fputs("label", stdout);
    for (int j = 0; j < k; j++) printf(",p_%d", j);
    fputc('\n', stdout);

    for (long r = 0; r < rows; r++) {
        for (int j = 0; j < k; j++) z[j] = 2.5 * normal01();
        z[splitmix64() % (uint64_t)k] += 3.0 + 6.0 * uniform01();
        double m = z[0];
        for (int j = 1; j < k; j++) if (z[j] > m) m = z[j];
        /* label ~ softmax(0.7 z) */
        double s = 0.0;
        for (int j = 0; j < k; j++) s += (p[j] = exp(0.7 * (z[j] - m)));
        double u = uniform01() * s, c = 0.0;
        int label = k - 1;
        for (int j = 0; j < k; j++) {
            c += p[j];
            if (u < c) { label = j; break; }
        }
        s = 0.0;
        for (int j = 0; j < k; j++) s += (p[j] = exp(z[j] - m));
        /* Every probability but the largest is rounded as printed; the largest is then printed
         * as 1 - (sum of the others as written), so the row sums to 1 within half a unit of its
         * last digit (<= 5e-7 at 6 digits: the largest is >= 1/K). */
        int top = 0;
        for (int j = 1; j < k; j++) if (p[j] > p[top]) top = j;
        double rest = 0.0;
        char field[48];
        for (int j = 0; j < k; j++) {
            if (j == top) continue;
            format_sig(field, p[j] / s);
            rest += (p[j] = strtod(field, NULL));
        }
        size_t len = (size_t)snprintf(line, 16, "%d", label);
        for (int j = 0; j < k; j++) {
            line[len++] = ',';
            len += (size_t)format_sig(line + len, j == top ? 1.0 - rest : p[j]);
        }
        line[len++] = '\n';
        fwrite(line, 1, len, stdout);
    }
    free(z);
    free(p);
    free(line);
    return fflush(stdout) == 0 ? 0 : 1;
}
