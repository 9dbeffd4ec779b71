/* Tuning files (--tune-file): KEY<TAB>VARIANT<TAB>NANOSECONDS lines, '#'
 * comments; the tuner (tune.c) writes them, lower_choose (kcall.c) reads
 * the variant chosen for a key. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

typedef struct TuneEntry {
    const char *key, *variant;
    double ns;
} TuneEntry;

struct TuneTable {
    TuneEntry *e;
    int n;
};

const char *tune_lookup(const TuneTable *t, const char *key, double *ns)
{
    for (int i = 0; t && i < t->n; i++)
        if (!strcmp(t->e[i].key, key)) {
            if (ns) *ns = t->e[i].ns;
            return t->e[i].variant;
        }
    return NULL;
}

const TuneTable *tune_load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) fail_plain("cannot read the tuning file '%s': %s", path, strerror(errno));
    TuneTable *t = xalloc(sizeof *t);
    int cap = 0, lineno = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            fclose(f);
            fail_plain("%s:%d: line too long", path, lineno);
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (!len || line[0] == '#') continue;
        char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL, *end = NULL;
        double ns = tab2 ? strtod(tab2 + 1, &end) : 0;
        if (!tab1 || !tab2 || tab1 == line || tab2 == tab1 + 1 || !end || *end || !(ns >= 0)) {
            fclose(f);
            fail_plain("%s:%d: not a tuning line (KEY<TAB>VARIANT<TAB>NANOSECONDS)", path, lineno);
        }
        *tab1 = *tab2 = 0;
        for (int i = 0; i < t->n; i++)
            if (!strcmp(t->e[i].key, line)) {
                fclose(f);
                fail_plain("%s:%d: key '%s' is given twice", path, lineno, line);
            }
        if (t->n == cap) {
            cap = cap ? 2 * cap : 32;
            TuneEntry *e = xalloc(sizeof *e * (size_t)cap);
            if (t->n) memcpy(e, t->e, sizeof *e * (size_t)t->n);
            t->e = e;
        }
        t->e[t->n++] = (TuneEntry){xstrdup(line), xstrdup(tab1 + 1), ns};
    }
    fclose(f);
    return t;
}
