/* Text helpers for everything the compiler writes: C identifiers, model
 * text made safe inside C comments and string literals, file names for
 * banners. Core: used by every stage, uses nothing but the pool. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "ir.h"

/* A valid C identifier made of s: other characters become '_', a leading
 * digit gets a '_' before it. */
char *c_ident(const char *s)
{
    size_t n = strlen(s);
    char *r = xalloc(n + 2), *d = r;
    if (!n || isdigit((unsigned char)s[0])) *d++ = '_';
    for (; *s; s++) *d++ = isalnum((unsigned char)*s) ? *s : '_';
    *d = 0;
    return r;
}

/* Model-given text (names, the graph's name, the producer, the file path)
 * inside a generated comment: no comment end, no line break, printable. */
const char *c_comment(const char *s)
{
    size_t n = strlen(s);
    char *r = xalloc(2 * n + 1), *d = r;
    for (const char *p = s; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '*' && p[1] == '/') { *d++ = '*'; *d++ = ' '; continue; }
        if (ch == '/' && p[1] == '*') { *d++ = '/'; *d++ = ' '; continue; }
        *d++ = ch < 32 || ch == 127 ? ' ' : (char)ch;
    }
    *d = 0;
    return r;
}

/* Model-given text inside a C string literal: escaped, non-printable and
 * non-ASCII bytes as octal escapes (the literal keeps the exact bytes). */
const char *c_string(const char *s)
{
    size_t n = strlen(s);
    char *r = xalloc(4 * n + 1), *d = r;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') { *d++ = '\\'; *d++ = (char)*p; }
        else if (*p < 32 || *p >= 127 || *p == '?') d += sprintf(d, "\\%03o", *p);   /* '?': no trigraphs */
        else *d++ = (char)*p;
    }
    *d = 0;
    return r;
}

/* The model's file name without its folders, for the banner of every
 * generated file: the same bytes whatever path or working directory the
 * model was compiled from (tests/test_determinism.py). */
const char *source_name(const char *path)
{
    const char *b = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\') b = p + 1;
    return b;
}
