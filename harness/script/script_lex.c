/* Tokens, numbers and "did you mean" suggestions for workload scripts. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "script_internal.h"

/* Scans one word starting at *pp, shell-like: quoted parts ("..." with \"
 * and \\ escapes, or '...' taken literally) are unquoted in place and may
 * sit inside a word (help="two words"); spaces inside (...) do not end a
 * word, so `mix(3:fixed(16), 1:uniform(1,2))` is one. The word is written
 * over the line from its start (the write side never passes the read side).
 * Returns 0, or -1 with a message. */
static int scan_word(char **pp, sc_token *tok, char *err, size_t errlen)
{
    char *r = *pp, *w = *pp;
    int depth = 0;
    tok->text = w;
    tok->quoted = (*r == '"' || *r == '\'') ? *r : 0;
    while (*r && !(isspace((unsigned char)*r) && depth == 0)) {
        if (*r == '"' || *r == '\'') {
            char quote = *r++;
            while (*r && *r != quote) {
                if (quote == '"' && *r == '\\' && (r[1] == '"' || r[1] == '\\'))
                    r++;
                *w++ = *r++;
            }
            if (!*r) {
                snprintf(err, errlen, "unterminated %c-quoted string", quote);
                return -1;
            }
            r++;
            continue;
        }
        if (*r == '(')
            depth++;
        else if (*r == ')' && depth > 0)
            depth--;
        *w++ = *r++;
    }
    if (depth > 0) {
        *w = '\0';
        snprintf(err, errlen, "unbalanced '(' in '%s'", tok->text);
        return -1;
    }
    int at_end = *r == '\0';
    *w = '\0';
    *pp = at_end ? r : r + 1;
    return 0;
}

int sc_tokenize(char *line, sc_token *tok, int max, char *err, size_t errlen)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '\0' || *p == '#')
            return n;
        if (n == max) {
            snprintf(err, errlen, "too many words on one line (at most %d)", max);
            return -1;
        }
        if (scan_word(&p, &tok[n], err, errlen) < 0)
            return -1;
        n++;
    }
}

/* Binary multipliers for the size suffixes. */
static const struct {
    char suffix;
    int shift;
} size_suffixes[] = {{'K', 10}, {'M', 20}, {'G', 30}};

int sc_parse_size(const char *s, long long *out, char *err, size_t errlen)
{
    unsigned long long v = 0;
    int digits = 0;
    const char *p = s;
    for (; *p; p++) {
        if (*p == '_' && digits > 0)
            continue;
        if (!isdigit((unsigned char)*p))
            break;
        unsigned d = (unsigned)(*p - '0');
        if (v > ((unsigned long long)LLONG_MAX - d) / 10)
            goto too_big;
        v = v * 10 + d;
        digits++;
    }
    if (digits > 0 && *p && p[1] == '\0') {
        char c = (char)toupper((unsigned char)*p);
        for (size_t i = 0; i < sizeof size_suffixes / sizeof size_suffixes[0]; i++) {
            if (c != size_suffixes[i].suffix)
                continue;
            if (v > ((unsigned long long)LLONG_MAX >> size_suffixes[i].shift))
                goto too_big;
            v <<= size_suffixes[i].shift;
            p++;
            break;
        }
    }
    if (digits == 0 || *p) {
        snprintf(err, errlen,
                 "bad number '%s' (expected digits with an optional K, M or G suffix)", s);
        return -1;
    }
    *out = (long long)v;
    return 0;
too_big:
    snprintf(err, errlen, "number '%s' is too large", s);
    return -1;
}

/* Levenshtein distance, bounded to short words (script keywords). */
static int edit_distance(const char *a, const char *b)
{
    enum { LONGEST = 32 };
    size_t la = strlen(a), lb = strlen(b);
    if (la > LONGEST || lb > LONGEST)
        return INT_MAX;
    int row[LONGEST + 1];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *sc_suggest(const char *word, const char *const *cands)
{
    /* A typo changes a couple of letters; more than that is another word. */
    enum { MAX_TYPO = 2 };
    const char *best = NULL;
    int best_d = INT_MAX;
    for (int i = 0; cands[i]; i++) {
        int d = edit_distance(word, cands[i]);
        if (d < best_d) {
            best_d = d;
            best = cands[i];
        }
    }
    size_t len = strlen(word);
    int limit = len <= 3 ? 1 : MAX_TYPO;
    return best_d <= limit ? best : NULL;
}

void sc_unknown(char *err, size_t errlen, const char *kind, const char *word,
                const char *const *cands)
{
    const char *near = sc_suggest(word, cands);
    if (near) {
        snprintf(err, errlen, "unknown %s '%s' (did you mean '%s'?)", kind, word, near);
        return;
    }
    /* No close match: list what is allowed, as far as the line has room. */
    size_t used = (size_t)snprintf(err, errlen, "unknown %s '%s' (expected", kind, word);
    for (int i = 0; cands[i] && used < errlen; i++)
        used += (size_t)snprintf(err + used, errlen - used, "%s %s", i ? "," : "", cands[i]);
    if (used < errlen)
        snprintf(err + used, errlen - used, ")");
}
