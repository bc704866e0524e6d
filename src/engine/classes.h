/* calscope engine: the one rule that says which class a token names (docs/input.md, "Which
 * class a label names").
 *
 * Used for labels in files (both loader paths), `--lens class:C`, `--lens group:`, and the
 * classes of selection expressions (`y == C`, `y in {..}`, `pred == C`, `p[C]`), so a class
 * token means the same thing everywhere.
 *
 * Every class has a name: its probability column's suffix (`p_cat` -> "cat"; "0", "1" for the
 * binary shorthand and for headerless files). A token names class j
 *   1. by name:     the token equals name j, ignoring ASCII case;
 *   2. by number:   the token is a decimal number (1, 1.0, 1e0) and name j is a number of the
 *                   same value (`p_1` is class 1, whatever its position);
 *   3. by position: the token is an integer 0..K-1 and NO class name is a number
 *                   (`p_cat,p_dog`: 1 is dog);
 *   4. `#N`:        always the N-th probability column, counted from 0, whatever the names
 *                   (what the dashboard uses when it cycles through classes).
 * A number is never read as a position when some class is named by a number, so the two
 * readings can never silently disagree; a number that names no class is then refused.
 * Names that differ only in case, or that are the same number (`p_1`, `p_1.0`), are the
 * same class (the loader refuses the second column as a duplicate). A name cannot be `#`
 * followed by digits. */
#ifndef CALSCOPE_CLASSES_H
#define CALSCOPE_CLASSES_H

#include <stddef.h>

typedef struct cs_classmap cs_classmap;

/* Why a token names no class (the `why` of the find functions). */
enum {
    CS_CLASS_UNKNOWN = 1,  /* not a number, and no class has this name */
    CS_CLASS_RANGE,        /* an integer outside 0..K-1 (no class name is a number, or the
                              names are exactly 0..K-1 in column order) */
    CS_CLASS_NOT_INT,      /* a number that is not an integer (idem) */
    CS_CLASS_NO_NUMBER,    /* a number, every class is named by a number, none by this one */
    CS_CLASS_AMBIGUOUS,    /* a number no class is named by, while some classes are named by
                              numbers and some not: a position would be a guess */
    CS_CLASS_POSITION      /* `#N` with N >= K */
};

/* Results of cs_classmap_add other than "added" (-1) and "duplicate of class i" (i >= 0). */
enum { CS_CLASSMAP_NOMEM = -2, CS_CLASSMAP_HASH_NAME = -3 };

/* An empty map; `cap` is a size hint. NULL when out of memory. Free with cs_classmap_free. */
cs_classmap *cs_classmap_new(size_t cap);

/* Appends the next class (its index is the number of classes so far). `name` is borrowed and
 * must outlive the map. Returns -1 when added; i >= 0 when class i already has this name (the
 * same text ignoring case, or the same number) and nothing is added; CS_CLASSMAP_HASH_NAME
 * when the name is `#` followed by digits (nothing added); CS_CLASSMAP_NOMEM. O(1) expected. */
long cs_classmap_add(cs_classmap *m, const char *name);
/* The same when the caller knows strlen(name) (name is still a C string). */
long cs_classmap_add_n(cs_classmap *m, const char *name, size_t len);

/* An empty map that reads class j's name from names[j] instead of keeping its own pointers:
 * the caller sets names[j] to the name it then passes to cs_classmap_add for class j (a name
 * refused as a duplicate or `#N` is not added, and its slot may be reused); `cap` is the size
 * of the array, and adding past it gives CS_CLASSMAP_NOMEM. Both the array and the names are
 * borrowed and must outlive the map. NULL when out of memory. (The loader builds the map of a
 * 100,000-column header this way, over the class names it keeps anyway.) */
cs_classmap *cs_classmap_over(char **names, size_t cap);

/* A map of names[0..k) (borrowed); a duplicate name keeps its first class. NULL when out of
 * memory. */
cs_classmap *cs_classmap_of(char *const *names, size_t k);

void cs_classmap_free(cs_classmap *m);    /* NULL is a no-op */

/* The class that the token p[0..len) names, or -1 with *why set (CS_CLASS_*). The token is
 * taken as written (no trimming). Read-only: any number of threads may call it at once. */
int cs_classmap_find(const cs_classmap *m, const char *p, size_t len, int *why);

/* The same for a token already read as the number v (finite). */
int cs_classmap_find_number(const cs_classmap *m, double v, int *why);

size_t cs_classmap_size(const cs_classmap *m);
/* How many class names are numbers. */
size_t cs_classmap_numbered(const cs_classmap *m);
/* Nonzero when every integer 0..K-1 names the class at that position (no name is a number, or
 * the names are the numbers 0..K-1 in column order): then a label can be read as an index. */
int cs_classmap_numbers_are_positions(const cs_classmap *m);
/* Nonzero when some class is named by a number that is not its position (`p_1,p_0`): the
 * load summary says that labels follow the names. */
int cs_classmap_out_of_order(const cs_classmap *m);

/* "a, b, c" (each name excerpted, control bytes as \xNN; "..." when it does not fit) into
 * buf; returns buf. */
char *cs_classmap_list(const cs_classmap *m, char *buf, size_t size);

/* The reason a token names no class, worded after the quoted token: for `why` from a find
 * function, writes e.g. "'7' names no class (classes are named by numbers: 1, 0)" into buf
 * for CS_CLASS_NO_NUMBER, CS_CLASS_AMBIGUOUS and CS_CLASS_POSITION (the other reasons have
 * caller-specific wordings). Returns buf. */
char *cs_classmap_explain(const cs_classmap *m, int why, const char *p, size_t len, char *buf,
                          size_t size);

#endif
